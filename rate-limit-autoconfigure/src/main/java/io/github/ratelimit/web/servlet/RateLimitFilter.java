package io.github.ratelimit.web.servlet;

import java.io.IOException;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Opens a {@link RateLimitExchange} for each request, starts it before the rest of the chain (path rules
 * that must be decided now), and ends it after: the {@link RateLimitInterceptor} decides it in between once
 * Spring MVC has found the handler. Runs once per request: error dispatches are not decided again, and the
 * last async dispatch of a request that counts later finishes its count. Thread-safe.
 */
class RateLimitFilter extends OncePerRequestFilter {

	private final RateLimitPipeline pipeline;

	private final SpringMvcServlets springMvc = new SpringMvcServlets();

	/** {@link OncePerRequestFilter}'s marker attribute, named once the filter is initialised, not per request. */
	private volatile @Nullable String alreadyFilteredAttributeName;

	RateLimitFilter(RateLimitPipeline pipeline) {
		this.pipeline = pipeline;
	}

	@Override
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		boolean asyncDispatch = isAsyncDispatch(request);
		// When no policy applies to any request at all, the filter steps aside.
		RateLimitExchange exchange = asyncDispatch ? RateLimitExchange.of(request)
				: this.pipeline.policies().limitsAnything() ? RateLimitExchange.open(this.pipeline, request, response) : null;
		// An async dispatch either resumes a request parked for its turn, as its first dispatch would have
		// gone on, or is an async request's later dispatch, seen only to count it when it finishes.
		ParkedTurn.ResumedRequest resumed = (asyncDispatch && exchange != null) ? exchange.resume(request) : null;
		boolean first = !asyncDispatch || resumed != null;
		if (exchange == null || (!first && !exchange.countsLater())) {
			chain.doFilter(request, response);
			return;
		}
		HttpServletResponse next = exchange.response(response);
		if (!asyncDispatch && !exchange.start(this.springMvc.reach(request), next)) {
			return;
		}
		boolean failed = true;
		try {
			// A later async dispatch goes on with the response the container dispatched (it carries later filters' wrappers).
			if (resumed == null || exchange.retakeSlots(resumed, next)) {
				chain.doFilter((resumed != null) ? resumed : request, first ? next : response);
			}
			failed = false;
		}
		finally {
			if (resumed != null) {
				resumed.dispatched();
			}
			if (first) {
				exchange.end(response, failed);
			}
			else if (failed || !request.isAsyncStarted()) {
				exchange.finish(response, failed);
			}
		}
	}

	@Override
	protected String getAlreadyFilteredAttributeName() {
		String name = this.alreadyFilteredAttributeName;
		if (name == null) {
			name = super.getAlreadyFilteredAttributeName();
			if (getFilterConfig() != null) {
				// The filter's name is final once the container has initialised it.
				this.alreadyFilteredAttributeName = name;
			}
		}
		return name;
	}

	@Override
	protected boolean shouldNotFilterAsyncDispatch() {
		// The last async dispatch of a request counted later finishes its count here.
		return false;
	}
}
