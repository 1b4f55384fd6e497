package io.github.ratelimit.web.servlet;

import jakarta.servlet.http.HttpServletRequest;

import io.github.ratelimit.web.RateLimitRejectionHandler;
import io.github.ratelimit.web.RequestDelay;
import io.github.ratelimit.web.clientip.ClientIpResolver;
import io.github.ratelimit.web.limiter.RateLimitHeaders;
import io.github.ratelimit.web.limiter.RequestLimiter;
import io.github.ratelimit.web.policy.RateLimitPolicyResolver;

/**
 * The stateless services a {@link RateLimitExchange} moves through, one set per application: they find a
 * request's policies, decide them, render the headers and the rejection, and hold a request for its turn.
 * @param policies finds the policies of a request
 * @param limiter decides them, in one store call
 * @param headers renders the rate limit headers
 * @param rejections answers a rejected request
 * @param delay holds a request that waits for its turn (delay mode)
 * @param rulesUpFront whether every request's path rules are decided before the rest of the filter chain
 * (the filter runs ahead of Spring Security's), not only those that count failures or successes
 * @param parking whether a waiting request is parked without its thread ({@code rate-limit.delay.park})
 * @param clientIps finds a request's client IP
 */
record RateLimitPipeline(RateLimitPolicyResolver policies, RequestLimiter limiter, RateLimitHeaders headers,
		RateLimitRejectionHandler rejections, RequestDelay delay, boolean rulesUpFront, ParkingCheck parking,
		ClientIpResolver clientIps) {

	/** The request as the limiter reads it. */
	ServletRequestView view(HttpServletRequest request) {
		return new ServletRequestView(request, this.clientIps);
	}

	/** The request as the limiter reads it, its parameters as the limiter's filter saw them. */
	ServletRequestView view(HttpServletRequest request, HttpServletRequest parameters) {
		return new ServletRequestView(request, parameters, this.clientIps);
	}
}
