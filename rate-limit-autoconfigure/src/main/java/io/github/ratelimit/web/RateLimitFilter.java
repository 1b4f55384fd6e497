package io.github.ratelimit.web;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.web.filter.OncePerRequestFilter;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.Decision;
import io.github.ratelimit.core.RateLimitStore;

/**
 * Limits requests: finds the policies that apply, resolves each one's key, asks the store for all of
 * them at once (all or nothing), writes the headers, then rejects the request, or lets it through,
 * after waiting for its turn in delay mode.
 * Runs once per request: async and error dispatches are not counted again. Thread-safe.
 */
public class RateLimitFilter extends OncePerRequestFilter {

	/**
	 * The default order: just after Spring Security's filter chain ({@code -100}), so that
	 * {@code user} keys see the authenticated principal.
	 */
	public static final int DEFAULT_ORDER = -90;

	private final RateLimitPolicyResolver policyResolver;

	private final RateLimitStore store;

	private final RateLimitHeaders headers;

	private final RateLimitRejectionHandler rejectionHandler;

	private final RequestDelay delay;

	/**
	 * Creates the filter.
	 * @param policyResolver finds the policies of a request
	 * @param store decides
	 * @param headers writes the rate limit headers
	 * @param rejectionHandler answers rejected requests
	 * @param delay holds requests that wait for their turn (delay mode)
	 */
	public RateLimitFilter(RateLimitPolicyResolver policyResolver, RateLimitStore store, RateLimitHeaders headers,
			RateLimitRejectionHandler rejectionHandler, RequestDelay delay) {
		this.policyResolver = policyResolver;
		this.store = store;
		this.headers = headers;
		this.rejectionHandler = rejectionHandler;
		this.delay = delay;
	}

	@Override
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		List<RateLimitPolicy> policies = this.policyResolver.resolve(request);
		if (policies.isEmpty()) {
			chain.doFilter(request, response);
			return;
		}
		List<Acquisition> acquisitions = new ArrayList<>(policies.size());
		for (RateLimitPolicy policy : policies) {
			acquisitions.add(policy.acquisition(request));
		}
		List<Decision> decisions = this.store.tryAcquireAll(acquisitions);
		RateLimitResult result = new RateLimitResult(policies, decisions);
		this.headers.write(result, response);
		if (!result.isAllowed()) {
			this.rejectionHandler.reject(request, response, result);
			return;
		}
		if (result.waitNanos() > 0) {
			try {
				this.delay.await(result.waitNanos());
			}
			catch (InterruptedException ex) {
				// Shutting down: the request keeps its turn and proceeds now.
				Thread.currentThread().interrupt();
			}
		}
		chain.doFilter(request, response);
	}
}
