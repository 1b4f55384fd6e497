package io.github.ratelimit.web;

import org.jspecify.annotations.Nullable;

/**
 * Finds whose budget a request spends, or which plan it is on. Declare a bean and name it in a policy's
 * {@code key} (or {@code plan}) as {@code @beanName}. Works on every web stack. Implementations must be
 * thread-safe and fast: they run on every limited request.
 */
@FunctionalInterface
public interface RequestKeyResolver {

	/**
	 * Resolves the key of a request.
	 * @param request the request
	 * @return the key, or {@code null} (or blank) to fall back to the client IP; a resolver that throws
	 * gets the request refused with {@code 400}
	 */
	@Nullable String resolve(RateLimitRequest request);

}
