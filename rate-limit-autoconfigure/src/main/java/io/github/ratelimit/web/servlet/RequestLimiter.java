package io.github.ratelimit.web.servlet;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Semaphore;

import jakarta.servlet.http.HttpServletRequest;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.Decision;
import io.github.ratelimit.core.RateLimitStore;
import io.github.ratelimit.core.Receipt;
import io.github.ratelimit.web.CountMode;
import io.github.ratelimit.web.DecisionOutcome;
import io.github.ratelimit.web.DecisionRecorder;

/**
 * Decides one request against the policies that apply to it, in two steps:
 * <ol>
 * <li>{@link #decide} when the request arrives: every enforced policy takes its tokens, all or nothing,
 * in one store call; shadow policies are evaluated the same way but never reject. A policy that counts
 * only some responses takes them too, with a receipt: an attempt in flight holds its part of the budget,
 * so however many attempts of one key arrive at once, at most its remaining tokens are admitted;</li>
 * <li>{@link #complete} when the response is known: a policy that counts failures (or successes) gives
 * back, by its receipt, what a response that does not count still holds. An attempt whose response
 * never completed (an exception, a client gone, an async request that timed out) keeps its cost.</li>
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

	/** The status {@link #complete} is told when no response completed: every attempt keeps its cost. */
	static final int NO_RESPONSE = -1;

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
		List<Receipt> receipts = evaluate(enforced, acquisitions);
		if (receipts == null) {
			return RequestDecision.unlimited();
		}
		List<Decision> decisions = decisions(receipts);
		if (mustWait(decisions) && !this.waiting.tryAcquire()) {
			decisions = refuseToWait(receipts);
		}
		RequestDecision result = new RequestDecision(enforced, decisions, deferred(enforced, receipts, decisions),
				slots(enforced, acquisitions, decisions));
		for (int i = 0; i < enforced.size(); i++) {
			Decision decision = decisions.get(i);
			this.recorder.decided(enforced.get(i).name(), outcome(decision, receipts.get(i).place(), result.isAllowed()));
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
	private List<Decision> refuseToWait(List<Receipt> receipts) {
		List<Decision> refused = new ArrayList<>(receipts.size());
		for (Receipt receipt : receipts) {
			Decision decision = receipt.decision();
			Decision now = decision;
			try {
				Decision after = this.store.giveBack(receipt);
				now = (after != null) ? after : decision;
			}
			catch (RuntimeException ex) {
				logger.debug("Rate limit store failed to give back the tokens of a request refused a wait", ex);
			}
			refused.add((decision.waitNanos() > 0) ? Decision.rejected(now.limit(), now.remaining(), now.resetNanos(),
					now.nextNanos(), decision.waitNanos()) : now);
		}
		return refused;
	}

	/**
	 * Settles the policies that count only some responses, once the response is known: a response that
	 * does not count gives back what its attempt still holds; one that counts keeps it.
	 * @param result the request's result
	 * @param status the response status, or {@link #NO_RESPONSE} when the request failed with an exception
	 * (then every attempt keeps its cost)
	 * @return the result with, for the headers, what each policy's last store call left
	 */
	public RequestDecision complete(RequestDecision result, int status) {
		List<Decision> decisions = new ArrayList<>(result.decisions());
		for (RequestDecision.Deferred deferred : result.deferred()) {
			if (status == NO_RESPONSE || deferred.policy().count().counts(status)) {
				continue;
			}
			Decision after = giveBack(deferred);
			int index = result.policies().indexOf(deferred.policy());
			if (after != null && index >= 0) {
				decisions.set(index, after);
			}
		}
		return new RequestDecision(result.policies(), decisions);
	}

	/**
	 * Gives back what the attempts of a request's policies that count later hold, for a request refused
	 * after they were admitted (by a later phase of its decision).
	 * @param result the result whose attempts are given back
	 */
	void giveBack(RequestDecision result) {
		for (RequestDecision.Deferred deferred : result.deferred()) {
			giveBack(deferred);
		}
	}

	/** Gives back one attempt; a store that fails keeps the cost (never generous). */
	private @Nullable Decision giveBack(RequestDecision.Deferred deferred) {
		long start = System.nanoTime();
		try {
			return this.store.giveBack(deferred.receipt());
		}
		catch (RuntimeException ex) {
			logger.debug("Rate limit store failed to give back an attempt that does not count; it stays counted", ex);
			return null;
		}
		finally {
			this.recorder.storeCall(System.nanoTime() - start);
		}
	}

	/**
	 * Evaluates shadow policies: everything but the rejection. Returns what they count later; adds the
	 * slots they took to {@code slots}.
	 */
	private List<RequestDecision.Deferred> observe(HttpServletRequest request, List<RateLimitPolicy> shadow,
			List<Acquisition> slots) {
		List<Acquisition> acquisitions = acquisitions(request, shadow);
		List<Receipt> receipts = evaluate(shadow, acquisitions);
		if (receipts == null) {
			return List.of();
		}
		List<Decision> decisions = decisions(receipts);
		boolean allAllowed = decisions.stream().allMatch(Decision::isAllowed);
		for (int i = 0; i < shadow.size(); i++) {
			Decision decision = decisions.get(i);
			DecisionOutcome outcome = outcome(decision, receipts.get(i).place(), allAllowed);
			this.recorder.decided(shadow.get(i).name(),
					(outcome == DecisionOutcome.REJECTED) ? DecisionOutcome.SHADOW_REJECTED : outcome);
			boolean allowed = decision.isAllowed();
			if (!allowed) {
				this.rejectionLog.rejected(shadow.get(i), acquisitions.get(i), true);
			}
		}
		slots.addAll(slots(shadow, acquisitions, decisions));
		return deferred(shadow, receipts, decisions);
	}

	/**
	 * Asks the store: one call that takes the tokens of every policy, all or nothing, with a receipt for
	 * each, by which {@link #complete} gives back what a response that does not count still holds.
	 * Returns {@code null} when the store failed.
	 */
	private @Nullable List<Receipt> evaluate(List<RateLimitPolicy> policies, List<Acquisition> acquisitions) {
		if (policies.isEmpty()) {
			return List.of();
		}
		long start = System.nanoTime();
		try {
			return this.store.admitAll(acquisitions);
		}
		catch (RuntimeException ex) {
			storeFailed(policies, ex);
			return null;
		}
		finally {
			this.recorder.storeCall(System.nanoTime() - start);
		}
	}

	private static List<Decision> decisions(List<Receipt> receipts) {
		if (receipts.size() == 1) {
			return List.of(receipts.get(0).decision());
		}
		List<Decision> decisions = new ArrayList<>(receipts.size());
		for (Receipt receipt : receipts) {
			decisions.add(receipt.decision());
		}
		return decisions;
	}

	/**
	 * What a policy did to a request: decided by the store, by its local fallback, or by
	 * {@code on-failure} without a store (a receipt of an allowed decision that holds nothing, in a request
	 * another policy rejected, was merely given back).
	 */
	private static DecisionOutcome outcome(Decision decision, Receipt.Place place, boolean requestAllowed) {
		if (place == Receipt.Place.LOCAL) {
			return decision.isAllowed() ? DecisionOutcome.LOCAL_ALLOWED : DecisionOutcome.LOCAL_REJECTED;
		}
		if (place == Receipt.Place.NOWHERE && (requestAllowed || !decision.isAllowed())) {
			return decision.isAllowed() ? DecisionOutcome.FAILED_OPEN : DecisionOutcome.FAILED_CLOSED;
		}
		return !decision.isAllowed() ? DecisionOutcome.REJECTED
				: (decision.waitNanos() > 0) ? DecisionOutcome.DELAYED : DecisionOutcome.ALLOWED;
	}

	/**
	 * The attempts to settle once the response is known: those of the policies that count later, of an
	 * allowed request (a rejected one holds nothing: all or nothing).
	 */
	private static List<RequestDecision.Deferred> deferred(List<RateLimitPolicy> policies, List<Receipt> receipts,
			List<Decision> decisions) {
		List<RequestDecision.Deferred> deferred = List.of();
		for (int i = 0; i < policies.size(); i++) {
			if (!decisions.get(i).isAllowed()) {
				return List.of();
			}
			Receipt receipt = receipts.get(i);
			if (policies.get(i).count() != CountMode.ALL && receipt.holdsCost()) {
				if (deferred.isEmpty()) {
					deferred = new ArrayList<>(policies.size());
				}
				deferred.add(new RequestDecision.Deferred(policies.get(i), receipt));
			}
		}
		return deferred;
	}

	private static boolean anyShadow(List<RateLimitPolicy> policies) {
		for (int i = 0; i < policies.size(); i++) {
			if (policies.get(i).shadow()) {
				return true;
			}
		}
		return false;
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
