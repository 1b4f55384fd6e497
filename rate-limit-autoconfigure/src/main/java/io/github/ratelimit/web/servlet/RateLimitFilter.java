package io.github.ratelimit.web.servlet;

import java.io.IOException;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletContext;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRegistration;
import jakarta.servlet.http.HttpServletMapping;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

import org.springframework.util.ClassUtils;
import org.springframework.web.filter.OncePerRequestFilter;
import org.springframework.web.servlet.DispatcherServlet;

import io.github.ratelimit.web.CountMode;

/**
 * Opens each request for the {@link RateLimitInterceptor}, which decides it once Spring MVC has found
 * its handler, and closes it: a request that counts only once its response is known (policies with
 * {@code count: failures} or {@code successes}) is counted here, its body held back until then. The
 * filter decides itself, on path rules alone, the requests the interceptor never sees: those of
 * another servlet (up front, as the interceptor would), and those a later filter answered before any
 * handler lookup (counted as answered). So every request is decided exactly once. Ahead of Spring
 * Security, it decides every request's path rules up front, before Security's filters can answer it, and
 * the interceptor its handler's own policies: each policy once.
 * <p>
 * Runs once per request: error dispatches are not decided again, and the last async dispatch of a
 * request counted later completes its count. The slots of concurrency limits a request holds are given
 * back when its first dispatch ends, or, when it went async, from an {@code AsyncListener} when the
 * async processing completes, fails or times out. Thread-safe.
 */
class RateLimitFilter extends OncePerRequestFilter {

	private final RateLimitInterceptor interceptor;

	private final boolean rulesUpFront;

	private volatile @Nullable Set<String> otherServlets;

	/**
	 * Creates the filter.
	 * @param interceptor decides the requests
	 */
	public RateLimitFilter(RateLimitInterceptor interceptor) {
		this(interceptor, false);
	}

	/**
	 * Creates the filter.
	 * @param interceptor decides the requests
	 * @param rulesUpFront whether it decides path rules before the rest of the chain for every request
	 * (it runs before Spring Security's filters), not only for those of other servlets
	 */
	RateLimitFilter(RateLimitInterceptor interceptor, boolean rulesUpFront) {
		this.interceptor = interceptor;
		this.rulesUpFront = rulesUpFront;
	}

	/**
	 * {@link OncePerRequestFilter}'s marker attribute, named once the filter is initialised instead of
	 * built for every request.
	 */
	private volatile @Nullable String alreadyFilteredAttributeName;

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
		if (!this.interceptor.limitsAnything()) {
			chain.doFilter(request, response);
			return;
		}
		LimitedRequest limited = LimitedRequest.open(request, response, this.interceptor.mayCountLater());
		HttpServletResponse next = limited.response(response);
		if (!reachesSpringMvc(request)) {
			if (!this.interceptor.decide(limited, request, next, this.interceptor.rules(request))) {
				return;
			}
		}
		else if (this.rulesUpFront || this.interceptor.rulesMayCountLater()) {
			// A rule that counts failures or successes is decided before the rest of the chain too: a later
			// filter that answers a login (its own authentication) would otherwise check every guess.
			List<RateLimitPolicy> rules = this.interceptor.rules(request);
			if ((this.rulesUpFront || countsLater(rules))
					&& !this.interceptor.decideRulesUpFront(limited, request, next, rules)) {
				return;
			}
		}
		boolean failed = true;
		try {
			chain.doFilter(request, next);
			failed = false;
		}
		finally {
			try {
				if (!limited.isDecided()) {
					this.interceptor.decideAnswered(limited, request, next);
				}
				if (failed || !request.isAsyncStarted()) {
					// Writes the held response: fails when the client has gone.
					count(limited, failed, response);
				}
			}
			finally {
				LimitedRequest.HeldSlots slots = limited.slots();
				if (slots != null) {
					endLater(slots, !failed && request.isAsyncStarted() ? request : null);
				}
			}
		}
	}

	private static boolean countsLater(List<RateLimitPolicy> policies) {
		for (int i = 0; i < policies.size(); i++) {
			if (policies.get(i).count() != CountMode.ALL) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Gives back a request's slots of concurrency limits now, or, for a request whose async processing
	 * goes on, when it completes, fails or times out.
	 */
	private static void endLater(LimitedRequest.HeldSlots slots, @Nullable HttpServletRequest asyncRequest) {
		if (asyncRequest != null) {
			try {
				asyncRequest.getAsyncContext().addListener(slots);
				return;
			}
			catch (IllegalStateException ex) {
				// Completed meanwhile (the async work was quicker than this dispatch): it ended.
			}
		}
		slots.release();
	}

	private void continueAsync(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		LimitedRequest limited = LimitedRequest.of(request);
		if (limited == null || limited.pendingCount() == null) {
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
				count(limited, failed, response);
			}
		}
	}

	/** Counts the request unless it was counted already, writes its headers, then lets the held body go. */
	private void count(LimitedRequest limited, boolean failed, HttpServletResponse response) throws IOException {
		RequestDecision result = limited.takeCount();
		HttpServletResponse counted = limited.response(response);
		if (result != null) {
			// A request that failed has no response to show it does not count: it keeps its cost.
			this.interceptor.count(result, failed ? RequestLimiter.NO_RESPONSE : counted.getStatus(), counted);
		}
		limited.release();
	}

	/**
	 * Whether the request goes to a Spring MVC {@link DispatcherServlet}, where the interceptor decides
	 * it. Only a request mapped to a servlet known to be another one is decided here, up front.
	 */
	private boolean reachesSpringMvc(HttpServletRequest request) {
		Set<String> others = otherServlets(request.getServletContext());
		if (others.isEmpty()) {
			return true;
		}
		HttpServletMapping mapping = request.getHttpServletMapping();
		return mapping == null || !others.contains(mapping.getServletName());
	}

	private Set<String> otherServlets(@Nullable ServletContext context) {
		Set<String> others = this.otherServlets;
		if (others == null) {
			others = new HashSet<>();
			try {
				if (context != null) {
					ClassLoader classLoader = context.getClassLoader();
					for (Map.Entry<String, ? extends ServletRegistration> entry : context.getServletRegistrations()
						.entrySet()) {
						String className = entry.getValue().getClassName();
						if (className == null || !ClassUtils.isPresent(className, classLoader)
								|| !DispatcherServlet.class.isAssignableFrom(ClassUtils.resolveClassName(className, classLoader))) {
							others.add(entry.getKey());
						}
					}
				}
			}
			catch (RuntimeException ex) {
				// A container that does not list its servlets: every request goes to Spring MVC.
				others.clear();
			}
			others = Set.copyOf(others);
			this.otherServlets = others;
		}
		return others;
	}
}
