package io.github.ratelimit.web.servlet;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

import org.springframework.core.Ordered;
import org.springframework.web.servlet.HandlerExceptionResolver;
import org.springframework.web.servlet.HandlerInterceptor;
import org.springframework.web.servlet.ModelAndView;

import io.github.ratelimit.web.RateLimitRejectionHandler;
import io.github.ratelimit.web.RateLimited;
import io.github.ratelimit.web.RequestDelay;

/**
 * Decides a request once Spring MVC knows where it goes, with every limit that applies to it at once
 * (path rules and the {@link RateLimited} handler's policies: one store call, all or nothing):
 * <ul>
 * <li>{@link #preHandle} when the dispatcher has found the handler: it reuses the dispatcher's own
 * lookup, so resolution is exact and the handler's URI template variables are there for keys;</li>
 * <li>{@link #resolveException} when the lookup failed (no handler: 404, 405, 406, 415, ...): on path
 * rules alone, before the error response is written, so a scanner still spends its budget and gets its
 * 429.</li>
 * </ul>
 * It then writes the headers, or the rejection, or holds an allowed request for its turn (delay mode).
 * It acts only on requests the {@link RateLimitFilter} opened, on their first dispatch, and only once.
 * Registered for every handler mapping (a {@code MappedInterceptor}) and first among the exception
 * resolvers. Thread-safe.
 */
final class RateLimitInterceptor implements HandlerInterceptor, HandlerExceptionResolver, Ordered {

	private final RateLimitPolicyResolver policyResolver;

	private final RequestLimiter limiter;

	private final RateLimitHeaders headers;

	private final RateLimitRejectionHandler rejectionHandler;

	private final RequestDelay delay;

	/**
	 * Creates the interceptor.
	 * @param policyResolver finds the policies of a request
	 * @param limiter decides
	 * @param headers writes the rate limit headers
	 * @param rejectionHandler answers rejected requests
	 * @param delay holds requests that wait for their turn (delay mode)
	 */
	public RateLimitInterceptor(RateLimitPolicyResolver policyResolver, RequestLimiter limiter,
			RateLimitHeaders headers, RateLimitRejectionHandler rejectionHandler, RequestDelay delay) {
		this.policyResolver = policyResolver;
		this.limiter = limiter;
		this.headers = headers;
		this.rejectionHandler = rejectionHandler;
		this.delay = delay;
	}

	@Override
	public boolean preHandle(HttpServletRequest request, HttpServletResponse response, Object handler)
			throws IOException {
		LimitedRequest limited = LimitedRequest.undecided(request);
		if (limited == null) {
			return true;
		}
		return decide(limited, request, response, policies(limited, request, handler));
	}

	@Override
	public @Nullable ModelAndView resolveException(HttpServletRequest request, HttpServletResponse response,
			@Nullable Object handler, Exception ex) {
		LimitedRequest limited = LimitedRequest.undecided(request);
		if (limited == null) {
			return null;
		}
		try {
			// Handled (an empty view) when rejected; else the other resolvers answer as they would.
			return decide(limited, request, response, policies(limited, request, handler)) ? null : new ModelAndView();
		}
		catch (IOException failure) {
			ex.addSuppressed(failure);
			return null;
		}
	}

	@Override
	public int getOrder() {
		return Ordered.HIGHEST_PRECEDENCE;
	}

	/** Whether any policy applies to any request at all; when none does, the filter steps aside. */
	boolean limitsAnything() {
		return this.policyResolver.limitsAnything();
	}

	/** Whether any policy counts only some responses, so that bodies may need holding back. */
	boolean mayCountLater() {
		return this.policyResolver.mayCountLater();
	}

	/** Whether some path rule counts only some responses (then the filter may decide rules up front). */
	boolean rulesMayCountLater() {
		return this.policyResolver.rulesMayCountLater();
	}

	List<RateLimitPolicy> rules(HttpServletRequest request) {
		return this.policyResolver.resolve(request, null);
	}

	/** The policies left to decide once the handler is known: only its own when the rules were decided up front. */
	private List<RateLimitPolicy> policies(LimitedRequest limited, HttpServletRequest request, @Nullable Object handler) {
		return limited.rulesDecided() ? this.policyResolver.resolveAnnotated(request, handler, limited.rulePolicies())
				: this.policyResolver.resolve(request, handler);
	}

	/**
	 * Decides a request's path rules before the filters after the rate limit filter run (it runs before
	 * Spring Security's), so that a request over its budget is answered before they see it: an
	 * authentication filter does not check a password of a client that is out of guesses. The handler's
	 * own policies are decided once Spring MVC has found it.
	 * @return whether the request proceeds
	 */
	boolean decideRulesUpFront(LimitedRequest limited, HttpServletRequest request, HttpServletResponse response,
			List<RateLimitPolicy> policies) throws IOException {
		RequestDecision rules;
		try {
			rules = answer(limited, request, response, policies);
		}
		catch (UnreadableRequestException ex) {
			if (refuse(ex, limited, request, response, policies)) {
				return false;
			}
			// Only shadow policies: nothing to wait for.
			rules = null;
		}
		if (rules != null && !rules.isAllowed()) {
			return false;
		}
		limited.awaitHandler(rules, policies);
		return true;
	}

	/**
	 * Decides a request and answers: headers, or the rejection, or its turn (delay mode).
	 * @return whether the request proceeds
	 */
	boolean decide(LimitedRequest limited, HttpServletRequest request, HttpServletResponse response,
			List<RateLimitPolicy> policies) throws IOException {
		RequestDecision result;
		try {
			result = answer(limited, request, response, policies);
		}
		catch (UnreadableRequestException ex) {
			return !refuse(ex, limited, request, response, policies);
		}
		return result == null || result.isAllowed();
	}

	/**
	 * Answers a request whose key, plan or exemption cannot be told ({@link UnreadableRequestException},
	 * thrown before any store call): {@code 400}, unless only shadow policies apply, which never change a
	 * response (the request goes on undecided, counted as {@code shadow-unreadable}). The one place that
	 * catches it.
	 * @param response the response to answer, {@code null} when it was answered already (only counted)
	 * @return whether it was refused
	 */
	private boolean refuse(UnreadableRequestException ex, LimitedRequest limited, HttpServletRequest request,
			@Nullable HttpServletResponse response, List<RateLimitPolicy> policies) throws IOException {
		List<String> fellBack = UnreadableRequestException.takeFallbacks(request);
		boolean enforced = false;
		if (!this.limiter.isShadowOnly()) {
			for (RateLimitPolicy policy : policies) {
				enforced |= !policy.shadow();
			}
		}
		if (enforced) {
			// Shadow policies that fell back before the enforced one failed.
			for (String shadow : fellBack) {
				this.limiter.unreadable(shadow, true);
			}
		}
		String failed = ex.policy();
		for (RateLimitPolicy policy : policies) {
			if (!enforced || failed == null || failed.equals(policy.name())) {
				this.limiter.unreadable(policy.name(), !enforced || policy.shadow());
			}
		}
		if (!enforced || response == null) {
			return false;
		}
		// As for a 429: our answer, not the application's, so the attempts of rules decided up front are given back.
		giveBackPending(limited);
		UnreadableRequestProblem.write(request, response, ex);
		return true;
	}

	/**
	 * Decides a request and answers; with the result of its path rules when they were decided up front.
	 * @return the result, or {@code null} when no policy applied
	 */
	private @Nullable RequestDecision answer(LimitedRequest limited, HttpServletRequest request,
			HttpServletResponse response, List<RateLimitPolicy> policies) throws IOException {
		limited.decided();
		if (policies.isEmpty()) {
			return limited.rules();
		}
		RequestDecision own = limit(request, policies);
		RequestDecision rules = limited.rules();
		RequestDecision result = (rules != null) ? rules.and(own) : own;
		if (!result.isAllowed()) {
			// Its own policies took nothing (all or nothing); the rules decided up front give back what they hold.
			giveBackPending(limited);
			this.headers.write(result, response);
			this.rejectionHandler.reject(request, response, result);
			return result;
		}
		limited.holdSlots(result, this.limiter);
		if (result.deferred().isEmpty()) {
			if (result.isLimited()) {
				this.headers.write(result, response);
			}
		}
		else {
			// Headers once, when the response has been counted.
			limited.countLater(result, this);
		}
		// Its own wait only: a wait of the rules decided up front was waited then.
		awaitTurn(own);
		return result;
	}

	/**
	 * A request refused after its path rules were decided up front (by a 429 or a 400 of its handler's
	 * policies): what their attempts hold is given back, as the count they waited for is off.
	 */
	private void giveBackPending(LimitedRequest limited) {
		RequestDecision pending = limited.takeCount();
		if (pending != null) {
			this.limiter.giveBack(pending);
		}
	}

	/**
	 * Decides a request that went through without being decided (it never reached a handler lookup,
	 * e.g. a later filter answered it): on path rules alone, counted as it was answered; it cannot be
	 * rejected any more, but it spends its budget.
	 */
	void decideAnswered(LimitedRequest limited, HttpServletRequest request, HttpServletResponse response)
			throws IOException {
		limited.decided();
		if (limited.rulesDecided()) {
			// Its rules were decided up front; without a handler nothing else applies.
			return;
		}
		List<RateLimitPolicy> rules = rules(request);
		if (rules.isEmpty()) {
			return;
		}
		RequestDecision result;
		try {
			result = limit(request, rules);
		}
		catch (UnreadableRequestException ex) {
			// Answered already: too late for a 400, but counted as the refusal it would have been.
			refuse(ex, limited, request, null, rules);
			return;
		}
		if (result.isAllowed()) {
			// Served already: its slots are given back as the filter ends it.
			limited.holdSlots(result, this.limiter);
		}
		if (result.waitNanos() > 0) {
			// Too late to wait for a turn: give back the waiting place it was given.
			this.limiter.doneWaiting();
		}
		if (!result.deferred().isEmpty()) {
			result = this.limiter.complete(result, response.getStatus());
		}
		// A rejection comes too late to answer it: no Retry-After on a response that was served.
		if (result.isLimited() && result.isAllowed() && !response.isCommitted()) {
			this.headers.write(result, response);
		}
	}

	/**
	 * Decides a request with the limiter. Its parameters are read first when a policy's key, plan or
	 * exemption may read them, so that all of those (and the handler) see one set, or the request is
	 * refused ({@link RequestParameters}). In {@code rate-limit.mode: shadow} every policy is its shadow
	 * copy, so that one that cannot be told falls back instead of refusing.
	 * @throws UnreadableRequestException when an enforced policy's key, plan or exemption cannot be told,
	 * before any store call
	 */
	private RequestDecision limit(HttpServletRequest request, List<RateLimitPolicy> policies) {
		List<RateLimitPolicy> decided = policies;
		boolean readsParameters = false;
		for (int i = 0; i < policies.size(); i++) {
			readsParameters |= policies.get(i).readsParameters();
		}
		if (readsParameters) {
			RequestParameters.read(request);
		}
		if (this.limiter.isShadowOnly()) {
			decided = new ArrayList<>(policies.size());
			for (RateLimitPolicy policy : policies) {
				decided.add(policy.inShadow());
			}
		}
		RequestDecision result = this.limiter.decide(request, decided);
		for (String shadow : UnreadableRequestException.takeFallbacks(request)) {
			this.limiter.unreadable(shadow, true);
		}
		return result;
	}

	/**
	 * Settles a request whose policies count only some responses, then writes its headers.
	 * @param status the response's status, or {@link RequestLimiter#NO_RESPONSE} when it failed
	 */
	void count(RequestDecision result, int status, HttpServletResponse response) {
		RequestDecision counted = this.limiter.complete(result, status);
		if (counted.isLimited() && !response.isCommitted()) {
			this.headers.write(counted, response);
		}
	}

	private void awaitTurn(RequestDecision result) {
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
}
