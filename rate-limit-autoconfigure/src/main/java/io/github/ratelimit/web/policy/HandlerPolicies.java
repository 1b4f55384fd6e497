package io.github.ratelimit.web.policy;

import java.util.List;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.web.key.LimitedRequest;

/**
 * Where a request goes names policies of its own, beside the path rules: a {@code @RateLimited} handler
 * method ({@link AnnotatedEndpoints}), a gateway route's {@code RateLimited} filter. Each is asked once the
 * handler is known; the {@link RateLimitPolicyResolver} decides their policies with the rules' in one store
 * call, each budget once. Internal to the starter's modules, not an extension point. Thread-safe.
 */
public interface HandlerPolicies {

	/**
	 * Returns the policies a request's handler names.
	 * @param request the request
	 * @param handler the handler found for it, or {@code null} when none was
	 * @return its policies; empty when it names none
	 */
	List<RateLimitPolicy> policiesFor(LimitedRequest request, @Nullable Object handler);

	/**
	 * Returns whether some handler names a policy, now.
	 * @return {@code false} while none does
	 */
	boolean any();

	/**
	 * Returns whether some policy a handler names counts only some responses.
	 * @return {@code true} when a request may be counted once its response is known
	 */
	boolean countsLater();

	/**
	 * Returns whether a response's status says that the request's handler could not answer it, like a
	 * gateway's backend that is down: such a response is neither a failure nor a success.
	 * @param request the request
	 * @param status its response's status
	 * @return {@code false} unless the handler was unavailable
	 */
	default boolean isOutage(LimitedRequest request, int status) {
		return false;
	}

}
