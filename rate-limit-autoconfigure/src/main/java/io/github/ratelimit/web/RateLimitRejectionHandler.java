package io.github.ratelimit.web;

import java.io.IOException;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

/**
 * Writes the response of a rejected request. The default, {@link ProblemDetailRejectionHandler},
 * answers {@code 429} with an RFC 9457 problem; declare a bean of this type to answer otherwise.
 * The rate limit headers and {@code Retry-After} are already set when it is called. Implementations
 * must be thread-safe.
 */
@FunctionalInterface
public interface RateLimitRejectionHandler {

	/**
	 * Writes the rejection.
	 * @param request the rejected request
	 * @param response its response, not yet committed
	 * @param result what the limits decided
	 * @throws IOException when the response cannot be written
	 */
	void reject(HttpServletRequest request, HttpServletResponse response, RateLimitResult result) throws IOException;
}
