package io.github.ratelimit.web;

import java.io.IOException;
import java.util.List;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.web.filter.OncePerRequestFilter;
import org.springframework.web.util.ContentCachingResponseWrapper;


/**
 * Limits requests: finds the policies that apply, lets the {@link RequestLimiter} decide, writes the
 * headers, then rejects the request, or lets it through (after waiting for its turn in delay mode, and
 * counting it once its response is known for policies that count only failures or successes).
 * Runs once per request: async and error dispatches are not counted again (the last async dispatch of
 * a request counted later completes its count). Thread-safe.
 */
public class RateLimitFilter extends OncePerRequestFilter {

	/**
	 * The default order: just after Spring Security's filter chain ({@code -100}), so that
	 * {@code user} keys see the authenticated principal.
	 */
	public static final int DEFAULT_ORDER = -90;

	private static final String PENDING_COUNT = RateLimitFilter.class.getName() + ".PENDING_COUNT";

	private final RateLimitPolicyResolver policyResolver;

	private final RequestLimiter limiter;

	private final RateLimitHeaders headers;

	private final RateLimitRejectionHandler rejectionHandler;

	private final RequestDelay delay;

	/**
	 * Creates the filter.
	 * @param policyResolver finds the policies of a request
	 * @param limiter decides
	 * @param headers writes the rate limit headers
	 * @param rejectionHandler answers rejected requests
	 * @param delay holds requests that wait for their turn (delay mode)
	 */
	public RateLimitFilter(RateLimitPolicyResolver policyResolver, RequestLimiter limiter, RateLimitHeaders headers,
			RateLimitRejectionHandler rejectionHandler, RequestDelay delay) {
		this.policyResolver = policyResolver;
		this.limiter = limiter;
		this.headers = headers;
		this.rejectionHandler = rejectionHandler;
		this.delay = delay;
	}

	@Override
	protected boolean shouldNotFilterAsyncDispatch() {
		// The last async dispatch of a request counted later completes its count here.
		return false;
	}

	@Override
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		if (isAsyncDispatch(request)) {
			continueAsync(request, response, chain);
			return;
		}
		List<RateLimitPolicy> policies = this.policyResolver.resolve(request);
		if (policies.isEmpty()) {
			chain.doFilter(request, response);
			return;
		}
		RateLimitResult result = this.limiter.decide(request, policies);
		if (result.isLimited()) {
			this.headers.write(result, response);
		}
		if (!result.isAllowed()) {
			this.rejectionHandler.reject(request, response, result);
			return;
		}
		awaitTurn(result);
		if (result.deferred().isEmpty()) {
			chain.doFilter(request, response);
			return;
		}
		proceedThenCount(request, response, chain, result);
	}

	private void awaitTurn(RateLimitResult result) {
		if (result.waitNanos() > 0) {
			try {
				this.delay.await(result.waitNanos());
			}
			catch (InterruptedException ex) {
				// Shutting down: the request keeps its turn and proceeds now.
				Thread.currentThread().interrupt();
			}
			finally {
				this.limiter.doneWaiting();
			}
		}
	}

	/**
	 * For policies that count failures (or successes), the response decides whether the request
	 * counts. Its body is held back until it has been counted, so that a client cannot read the answer
	 * and send its next attempt before this one is counted.
	 */
	private void proceedThenCount(HttpServletRequest request, HttpServletResponse response, FilterChain chain,
			RateLimitResult result) throws ServletException, IOException {
		ContentCachingResponseWrapper held = new ContentCachingResponseWrapper(response);
		boolean failed = true;
		try {
			chain.doFilter(request, held);
			failed = false;
		}
		finally {
			if (!failed && request.isAsyncStarted()) {
				request.setAttribute(PENDING_COUNT, new PendingCount(result, held));
			}
			else {
				count(result, failed ? 500 : held.getStatus(), held);
			}
		}
	}

	private void continueAsync(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		if (!(request.getAttribute(PENDING_COUNT) instanceof PendingCount pending)) {
			chain.doFilter(request, response);
			return;
		}
		boolean failed = true;
		try {
			chain.doFilter(request, response);
			failed = false;
		}
		finally {
			if (failed || !request.isAsyncStarted()) {
				request.removeAttribute(PENDING_COUNT);
				count(pending.result(), failed ? 500 : pending.response().getStatus(), pending.response());
			}
		}
	}

	/** Counts the request, brings its headers up to date, then lets the held body go. */
	private void count(RateLimitResult result, int status, ContentCachingResponseWrapper held) throws IOException {
		RateLimitResult counted = this.limiter.complete(result, status);
		if (counted.isLimited() && !held.isCommitted()) {
			this.headers.write(counted, held);
		}
		held.copyBodyToResponse();
	}

	/** A request counted later whose async processing has not finished yet. */
	private record PendingCount(RateLimitResult result, ContentCachingResponseWrapper response) {
	}
}
