package io.github.ratelimit.web;

import java.util.concurrent.CompletionStage;

import org.jspecify.annotations.Nullable;

/**
 * Finds whose budget a request spends, or which plan it is on, when finding it takes I/O (an API key looked
 * up in a database or another service): the answer comes later, and no thread waits for it on WebFlux.
 * Declare a bean and name it in a policy's {@code key} (or {@code plan}) as {@code @beanName}, as a
 * {@link RequestKeyResolver}. On WebFlux the limiter asks it before it decides, and decides once the answer
 * came; on Spring MVC the request's thread waits for it. A reactive resolver answers with
 * {@code mono.toFuture()}. Implementations must be thread-safe.
 */
@FunctionalInterface
public interface AsyncRequestKeyResolver {

	/**
	 * Resolves the key of a request. Read what you need of the request before this method returns: the view is
	 * valid while the request is decided.
	 * @param request the request
	 * @return the key to come, or {@code null} (or blank) to fall back to the client IP; a stage that fails (or
	 * a resolver that throws) gets the request refused with {@code 400}. A stage that never completes holds the
	 * request: bound your I/O with a timeout.
	 */
	CompletionStage<@Nullable String> resolve(RateLimitRequest request);

}
