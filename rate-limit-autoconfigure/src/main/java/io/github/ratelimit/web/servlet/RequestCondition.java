package io.github.ratelimit.web.servlet;

import jakarta.servlet.http.HttpServletRequest;

/**
 * A condition over a request, such as an exemption. Implementations are thread-safe and never throw.
 */
@FunctionalInterface
interface RequestCondition {

	/**
	 * Tells whether the condition holds for a request.
	 * @param request the request
	 * @return {@code true} when it holds
	 */
	boolean test(HttpServletRequest request);
}
