package io.github.ratelimit.web;

import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

/**
 * Finds whose budget a request spends, from a servlet request: the form of 0.1.0, still taken on Spring
 * MVC, where it gets the request it always got.
 * @deprecated since 0.2.0, for the form that works on every web stack: implement
 * {@link RequestKeyResolver}, which reads the same from a {@link RateLimitRequest}
 * ({@code request.unwrap(HttpServletRequest.class)} reaches what it does not carry)
 */
@Deprecated(since = "0.2.0")
@FunctionalInterface
public interface KeyResolver extends RequestKeyResolver {

	/**
	 * Resolves the key of a request.
	 * @param request the request
	 * @return the key, or {@code null} (or blank) to fall back to the client IP
	 */
	@Nullable String resolve(HttpServletRequest request);

	/**
	 * Resolves the key of a servlet request; on another stack the request is refused ({@code 400}) and the
	 * resolver must be written as a {@link RequestKeyResolver}.
	 */
	@Override
	default @Nullable String resolve(RateLimitRequest request) {
		HttpServletRequest servlet = request.unwrap(HttpServletRequest.class);
		if (servlet == null) {
			throw new IllegalStateException(getClass().getName() + " is a servlet KeyResolver; implement RequestKeyResolver");
		}
		return resolve(servlet);
	}
}
