package io.github.ratelimit.web.servlet;

import java.io.IOException;
import java.util.List;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import io.github.ratelimit.web.policy.RateLimitPolicy;

/**
 * The entry of a Spring Cloud Gateway Server MVC route's {@code RateLimited} filter into the request's exchange
 * ({@link RateLimitExchange#decideRoute}). Internal to the starter's modules.
 */
public final class RouteLimits {

	private RouteLimits() {
	}

	/**
	 * Decides a route's policies for a request, with what its exchange decided before, all or nothing.
	 * @param request the request the route's handler got
	 * @param response the response
	 * @param policies the policies the route names
	 * @return whether the request proceeds to the backend: not when it was answered (a 429, a 400)
	 * @throws IOException when the answer cannot be written
	 */
	public static boolean decide(HttpServletRequest request, HttpServletResponse response, List<RateLimitPolicy> policies)
			throws IOException {
		RateLimitExchange exchange = RateLimitExchange.of(request);
		return exchange == null || exchange.decideRoute(request, policies, response);
	}

}
