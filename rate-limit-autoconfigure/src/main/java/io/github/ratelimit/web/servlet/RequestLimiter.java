package io.github.ratelimit.web.servlet;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Semaphore;

import jakarta.servlet.http.HttpServletRequest;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.Decision;
import io.github.ratelimit.core.RateLimitStore;
import io.github.ratelimit.web.CountMode;
import io.github.ratelimit.web.DecisionOutcome;
import io.github.ratelimit.web.DecisionRecorder;

/**
 * Decides one request against the policies that apply to it, in two steps:
 * <ol>
 * <li>{@link #decide} when the request arrives: enforced policies that count every request take their
 * tokens (all or nothing); enforced policies that count only some responses are checked without
 * taking; shadow policies are evaluated the same way but never reject;</li>
 * <li>{@link #complete} when the response is known: policies that count failures (or successes) take
 * their tokens if the response is one.</li>
 * </ol>
 * Before that, a request exempt from a policy (or from all, {@link RateLimitExemptions}) leaves it out
 * (counted as exempt), and each policy takes the limit of the request's plan. It records every outcome
 * (metrics) and logs rejections. A store that throws fails open: the request
 * goes through and the error is counted.
 * <p>
 * Delay mode is bounded for the whole application: at most {@code maxWaiting} requests wait for their
 * turn at once, over all policies and keys. A request that would wait beyond that is rejected at
 * once: it gives back every token it took, and the policies that would have made it wait are its
 * violated policies, with the wait it would have had as its retry-after. A result that must wait holds
 * one of those places until {@link #doneWaiting()}. Thread-safe; the bound is exact.
 * <p>
 * Concurrency limits take their slots in the same store call as every other limit (all or nothing: a
 * request another policy rejects holds none); an allowed result lists them ({@code slots}), and they are
 * given back by {@link #release} when the response is complete.
 */
final class RequestLimiter {

	private static final Log logger = LogFactory.getLog(RequestLimiter.class);

	private final RateLimitStore store;

	private final DecisionRecorder recorder;

	private final RejectionLog rejectionLog;

	private final boolean shadowOnly;

	private final Semaphore waiting;

	private final RateLimitExemptions exemptions;

	/**
	 * Creates a limiter that lets at most 100 requests wait at once.
	 * @param store decides
	 * @param recorder receives outcomes
	 * @param rejectionLog logs rejections
	 * @param shadowOnly whether every policy only observes ({@code rate-limit.mode: shadow})
	 */
	public RequestLimiter(RateLimitStore store, DecisionRecorder recorder, RejectionLog rejectionLog,
			boolean shadowOnly) {
		this(store, recorder, rejectionLog, shadowOnly, 100);
	}

	/**
	 * Creates a limiter.
	 * @param store decides
	 * @param recorder receives outcomes
	 * @param rejectionLog logs rejections
	 * @param shadowOnly whether every policy only observes ({@code rate-limit.mode: shadow})
	 * @param maxWaiting the most requests waiting for their turn at once (delay mode); positive
	 */
	public RequestLimiter(RateLimitStore store, DecisionRecorder recorder, RejectionLog rejectionLog,
			boolean shadowOnly, int maxWaiting) {
		this(store, recorder, rejectionLog, shadowOnly, maxWaiting, RateLimitExemptions.NONE);
	}

	/**
	 * Creates a limiter with exemptions.
	 * @param store decides
	 * @param recorder receives outcomes
	 * @param rejectionLog logs rejections
	 * @param shadowOnly whether every policy only observes ({@code rate-limit.mode: shadow})
	 * @param maxWaiting the most requests waiting for their turn at once (delay mode); positive
	 * @param exemptions the requests no policy limits
	 */
	public RequestLimiter(RateLimitStore store, DecisionRecorder recorder, RejectionLog rejectionLog,
			boolean shadowOnly, int maxWaiting, RateLimitExemptions exemptions) {
		this.exemptions = exemptions;
		if (maxWaiting <= 0) {
			throw new IllegalArgumentException("maxWaiting must be positive, was " + maxWaiting);
		}
		this.store = store;
		this.recorder = recorder;
		this.rejectionLog = rejectionLog;
		this.shadowOnly = shadowOnly;
		this.waiting = new Semaphore(maxWaiting);
	}

	/**
	 * Decides a request as it arrives.
	 * @param request the request
	 * @param applicable the policies that apply
	 * @return the enforced decision; its deferred part is completed by {@link #complete}
	 */
	public RequestDecision decide(HttpServletRequest request, List<RateLimitPolicy> applicable) {
		List<RateLimitPolicy> policies = inForce(request, applicable);
		List<RateLimitPolicy> enforced = policies;
		List<RateLimitPolicy> shadow = List.of();
		if (this.shadowOnly || anyShadow(policies)) {
			enforced = new ArrayList<>(policies.size());
			shadow = new ArrayList<>(policies.size());
			for (RateLimitPolicy policy : policies) {
				((policy.shadow() || this.shadowOnly) ? shadow : enforced).add(policy);
			}
		}
		List<Acquisition> acquisitions = acquisitions(request, enforced);
		List<Decision> decisions = evaluate(enforced, acquisitions);
		if (decisions == null) {
			return RequestDecision.unlimited();
		}
		if (mustWait(decisions) && !this.waiting.tryAcquire()) {
			decisions = refuseToWait(enforced, acquisitions, decisions);
		}
		RequestDecision result = new RequestDecision(enforced, decisions, deferred(enforced, acquisitions, decisions),
				slots(enforced, acquisitions, decisions));
		for (int i = 0; i < enforced.size(); i++) {
			Decision decision = decisions.get(i);
			DecisionOutcome outcome = !decision.isAllowed() ? DecisionOutcome.REJECTED
					: (decision.waitNanos() > 0) ? DecisionOutcome.DELAYED : DecisionOutcome.ALLOWED;
			this.recorder.decided(enforced.get(i).name(), outcome);
			if (!decision.isAllowed()) {
				this.rejectionLog.rejected(enforced.get(i), acquisitions.get(i), false);
			}
		}
		if (result.isAllowed() && !shadow.isEmpty()) {
			List<Acquisition> shadowSlots = new ArrayList<>(0);
			List<RequestDecision.Deferred> shadowDeferred = observe(request, shadow, shadowSlots);
			return result.withShadow(shadowDeferred, shadowSlots);
		}
		return result;
	}

	private static List<Acquisition> acquisitions(HttpServletRequest request, List<RateLimitPolicy> policies) {
		if (policies.size() == 1) {
			return List.of(policies.get(0).acquisition(request));
		}
		List<Acquisition> acquisitions = new ArrayList<>(policies.size());
		for (int i = 0; i < policies.size(); i++) {
			acquisitions.add(policies.get(i).acquisition(request));
		}
		return acquisitions;
	}

	/**
	 * Gives back the slots of concurrency limits a request held, once its response is complete (or it
	 * failed, or its async processing ended). A store that fails to take them back is logged: with Redis,
	 * the lease expiry frees them.
	 * @param slots the slots, from {@link RequestDecision#slots()}
	 */
	void release(List<Acquisition> slots) {
		for (Acquisition slot : slots) {
			try {
				this.store.release(slot);
			}
			catch (RuntimeException ex) {
				logger.debug("Rate limit store failed to give back the slot of a request that ended", ex);
			}
		}
	}

	/**
	 * The slots of the concurrency limits an allowed request took: nothing when it was rejected (all or
	 * nothing: the store gave them back) or when a store failure let it through.
	 */
	private static List<Acquisition> slots(List<RateLimitPolicy> policies, List<Acquisition> acquisitions,
			List<Decision> decisions) {
		List<Acquisition> slots = List.of();
		for (int i = 0; i < policies.size(); i++) {
			if (!decisions.get(i).isAllowed()) {
				return List.of();
			}
			if (policies.get(i).isConcurrency()) {
				if (slots.isEmpty()) {
					slots = new ArrayList<>(1);
				}
				slots.add(acquisitions.get(i));
			}
		}
		return slots;
	}

	/**
	 * The policies as they judge this request: without those it is exempt from (counted as exempt), each
	 * with the limit of the request's plan.
	 */
	private List<RateLimitPolicy> inForce(HttpServletRequest request, List<RateLimitPolicy> policies) {
		boolean exemptFromAll = !policies.isEmpty() && this.exemptions.isExempt(request);
		// The list given is kept (no copy per request) until a policy is exempt or judged by a plan.
		List<RateLimitPolicy> inForce = null;
		for (int i = 0; i < policies.size(); i++) {
			RateLimitPolicy policy = policies.get(i);
			boolean exempt = exemptFromAll || policy.isExempt(request);
			RateLimitPolicy judged = exempt ? null : policy.inForceFor(request);
			if (judged != policy && inForce == null) {
				inForce = new ArrayList<>(policies.subList(0, i));
			}
			if (exempt) {
				this.recorder.decided(policy.name(), DecisionOutcome.EXEMPT);
			}
			else if (inForce != null) {
				inForce.add(judged);
			}
		}
		return (inForce != null) ? inForce : policies;
	}

	/**
	 * Frees the place in the queue of waiting requests that an allowed result with a wait held, once the
	 * request has waited (or given up).
	 */
	void doneWaiting() {
		this.waiting.release();
	}

	private static boolean mustWait(List<Decision> decisions) {
		boolean wait = false;
		for (int i = 0; i < decisions.size(); i++) {
			Decision decision = decisions.get(i);
			if (!decision.isAllowed()) {
				return false;
			}
			wait |= decision.waitNanos() > 0;
		}
		return wait;
	}

	/**
	 * Too many requests wait already: gives back every token taken, and rejects the request for the
	 * policies that would have made it wait, after the wait it would have had.
	 */
	private List<Decision> refuseToWait(List<RateLimitPolicy> policies, List<Acquisition> acquisitions,
			List<Decision> decisions) {
		List<Decision> refused = new ArrayList<>(decisions.size());
		for (int i = 0; i < decisions.size(); i++) {
			Decision decision = decisions.get(i);
			Decision now = decision;
			if (policies.get(i).count() == CountMode.ALL) {
				try {
					now = this.store.release(acquisitions.get(i));
				}
				catch (RuntimeException ex) {
					logger.debug("Rate limit store failed to give back the tokens of a request refused a wait", ex);
				}
			}
			refused.add((decision.waitNanos() > 0) ? Decision.rejected(now.limit(), now.remaining(), now.resetNanos(),
					now.nextNanos(), decision.waitNanos()) : now);
		}
		return refused;
	}

	/**
	 * Takes the tokens of the policies that count only some responses, once the response is known.
	 * @param result the request's result
	 * @param status the response status (500 when the request failed with an exception)
	 * @return the result with the decisions of the policies that counted the request, for headers
	 */
	public RequestDecision complete(RequestDecision result, int status) {
		List<Decision> decisions = new ArrayList<>(result.decisions());
		for (RequestDecision.Deferred deferred : result.deferred()) {
			if (deferred.policy().count().counts(status)) {
				try {
					long start = System.nanoTime();
					Decision counted = this.store.tryAcquire(deferred.acquisition());
					this.recorder.storeCall(System.nanoTime() - start);
					int index = result.policies().indexOf(deferred.policy());
					if (index >= 0) {
						decisions.set(index, counted.isAllowed() ? counted
								: Decision.allowed(counted.limit(), 0, counted.resetNanos(), counted.nextNanos()));
					}
				}
				catch (RuntimeException ex) {
					storeFailed(List.of(deferred.policy()), ex);
				}
			}
		}
		return new RequestDecision(result.policies(), decisions);
	}

	/**
	 * Evaluates shadow policies: everything but the rejection. Returns what they count later; adds the
	 * slots they took to {@code slots}.
	 */
	private List<RequestDecision.Deferred> observe(HttpServletRequest request, List<RateLimitPolicy> shadow,
			List<Acquisition> slots) {
		List<Acquisition> acquisitions = acquisitions(request, shadow);
		List<Decision> decisions = evaluate(shadow, acquisitions);
		if (decisions == null) {
			return List.of();
		}
		for (int i = 0; i < shadow.size(); i++) {
			boolean allowed = decisions.get(i).isAllowed();
			this.recorder.decided(shadow.get(i).name(), allowed ? DecisionOutcome.ALLOWED : DecisionOutcome.SHADOW_REJECTED);
			if (!allowed) {
				this.rejectionLog.rejected(shadow.get(i), acquisitions.get(i), true);
			}
		}
		slots.addAll(slots(shadow, acquisitions, decisions));
		return deferred(shadow, acquisitions, decisions);
	}

	/**
	 * Asks the store. When every policy counts every request: one call takes the tokens of all, all or
	 * nothing. Otherwise one read-only call checks the policies that count later; when they all pass,
	 * one call takes the others' tokens (when they do not, the others are only read, for headers).
	 * Returns {@code null} when the store failed.
	 */
	private List<Decision> evaluate(List<RateLimitPolicy> policies, List<Acquisition> acquisitions) {
		if (policies.isEmpty()) {
			return List.of();
		}
		long start = System.nanoTime();
		try {
			if (!anyCountsLater(policies)) {
				return this.store.tryAcquireAll(acquisitions);
			}
			List<Acquisition> later = new ArrayList<>(policies.size());
			List<Acquisition> now = new ArrayList<>(policies.size());
			for (int i = 0; i < policies.size(); i++) {
				((policies.get(i).count() == CountMode.ALL) ? now : later).add(acquisitions.get(i));
			}
			List<Decision> checked = this.store.checkAll(later);
			List<Decision> taken = List.of();
			if (!now.isEmpty()) {
				taken = checked.stream().allMatch(Decision::isAllowed) ? this.store.tryAcquireAll(now)
						: this.store.checkAll(now);
			}
			List<Decision> decisions = new ArrayList<>(policies.size());
			int nextLater = 0;
			int nextNow = 0;
			for (RateLimitPolicy policy : policies) {
				decisions.add((policy.count() == CountMode.ALL) ? taken.get(nextNow++) : checked.get(nextLater++));
			}
			return decisions;
		}
		catch (RuntimeException ex) {
			storeFailed(policies, ex);
			return null;
		}
		finally {
			this.recorder.storeCall(System.nanoTime() - start);
		}
	}

	private static boolean anyShadow(List<RateLimitPolicy> policies) {
		for (int i = 0; i < policies.size(); i++) {
			if (policies.get(i).shadow()) {
				return true;
			}
		}
		return false;
	}

	private static boolean anyCountsLater(List<RateLimitPolicy> policies) {
		for (int i = 0; i < policies.size(); i++) {
			if (policies.get(i).count() != CountMode.ALL) {
				return true;
			}
		}
		return false;
	}

	private static List<RequestDecision.Deferred> deferred(List<RateLimitPolicy> policies,
			List<Acquisition> acquisitions, List<Decision> decisions) {
		List<RequestDecision.Deferred> deferred = List.of();
		for (int i = 0; i < policies.size(); i++) {
			if (policies.get(i).count() != CountMode.ALL && decisions.get(i).isAllowed()) {
				if (deferred.isEmpty()) {
					deferred = new ArrayList<>(policies.size());
				}
				deferred.add(new RequestDecision.Deferred(policies.get(i), acquisitions.get(i)));
			}
		}
		return deferred;
	}

	/**
	 * Returns whether every policy only observes ({@code rate-limit.mode: shadow}).
	 * @return {@code true} in shadow mode
	 */
	boolean isShadowOnly() {
		return this.shadowOnly;
	}

	/**
	 * Records that a policy could not tell a request's key, plan or exemption
	 * ({@link UnreadableRequestException}): refused with {@code 400}, or, for a shadow policy, let through.
	 * @param policy the policy's name
	 * @param shadow whether the policy only observes
	 */
	void unreadable(String policy, boolean shadow) {
		this.recorder.decided(policy, shadow ? DecisionOutcome.SHADOW_UNREADABLE : DecisionOutcome.UNREADABLE);
	}

	private void storeFailed(List<RateLimitPolicy> policies, RuntimeException ex) {
		for (RateLimitPolicy policy : policies) {
			this.recorder.decided(policy.name(), DecisionOutcome.STORE_ERROR);
		}
		logger.debug("Rate limit store failed; letting the request through", ex);
	}
}
