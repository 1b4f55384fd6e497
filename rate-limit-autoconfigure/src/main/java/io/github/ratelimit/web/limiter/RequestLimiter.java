package io.github.ratelimit.web.limiter;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Semaphore;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.Decision;
import io.github.ratelimit.core.RateLimitStore;
import io.github.ratelimit.core.Receipt;
import io.github.ratelimit.web.DecisionOutcome;
import io.github.ratelimit.web.DecisionRecorder;
import io.github.ratelimit.web.key.LimitedRequest;
import io.github.ratelimit.web.key.UnreadableRequestException;
import io.github.ratelimit.web.policy.RateLimitExemptions;
import io.github.ratelimit.web.policy.RateLimitPolicy;

/**
 * Decides a request's policies into {@link Check}s, for its exchange (on either web stack); holds no state of
 * any request. Two steps:
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
 * A policy that slows down ({@code slow-down}) makes an allowed request wait, by the units its key had
 * spent before it ({@link RateLimitPolicy#slowDownNanos}). Waiting is bounded for the whole application
 * (delay mode and slow-down alike): at most {@code maxWaiting} requests wait for their turn at once, over
 * all policies and keys. A request that would wait beyond that is rejected at
 * once: it gives back every token it took, and the policies that would have made it wait are its
 * violated policies, with the wait it would have had as its retry-after. A result that must wait holds
 * one of those places until {@link #doneWaiting()}. Thread-safe; the bound is exact.
 * <p>
 * Concurrency limits take their slots in the same store call as every other limit (all or nothing: a
 * request another policy rejects holds none); the checks of an allowed request that hold one are given
 * back by {@link #release} when the request ends.
 */
public final class RequestLimiter {

	private static final Log logger = LogFactory.getLog(RequestLimiter.class);

	/** The status {@link #complete} is told when no response completed: every attempt keeps its cost. */
	public static final int NO_RESPONSE = -1;

	/**
	 * The status {@link #complete} is told when the handler could not answer (a gateway's backend that is
	 * down): neither a failure nor a success, so every attempt is given back.
	 */
	public static final int OUTAGE = -2;

	private final RateLimitStore store;

	private final DecisionRecorder recorder;

	private final RejectionLog rejectionLog;

	private final boolean shadowOnly;

	private final Semaphore waiting;

	private final RateLimitExemptions exemptions;

	/**
	 * Creates a limiter.
	 * @param store decides
	 * @param recorder receives outcomes
	 * @param rejectionLog logs rejections
	 * @param shadowOnly whether every policy only observes ({@code rate-limit.mode: shadow})
	 * @param maxWaiting the most requests waiting for their turn at once (delay mode, slow-down); positive
	 * @param exemptions the requests no policy limits ({@link RateLimitExemptions#NONE} for none)
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
	 * Decides a request's policies as it arrives: reads its parameters when a policy may (so that keys,
	 * plans, exemptions and the handler see one set), leaves out the policies it is exempt from, takes each
	 * policy's plan and key, then asks the store once for the enforced policies (all or nothing) and, when
	 * they allow the request, once for the shadow ones. In {@code rate-limit.mode: shadow} every policy is
	 * its shadow copy. The store is asked with {@link RateLimitStore#admitAll}, on the caller's thread.
	 * @param request the request
	 * @param applicable the policies that apply
	 * @return one check per policy decided: none when the store failed
	 * @throws UnreadableRequestException when an enforced policy's key, plan or exemption cannot be told,
	 * before any store call
	 */
	public List<Check> decide(LimitedRequest request, List<RateLimitPolicy> applicable) {
		return join(decide(request, applicable, false));
	}

	/**
	 * Decides a request's policies as {@link #decide} does, except that the store is asked with
	 * {@link RateLimitStore#admitAllAsync}, which must not block: what precedes the store call happens now, on
	 * the caller's thread (every key, with the request's security context); the rest when the store's step
	 * completes, on the thread that completes it.
	 * @param request the request
	 * @param applicable the policies that apply
	 * @return one check per policy decided, to come: none when the store failed
	 * @throws UnreadableRequestException when an enforced policy's key, plan or exemption cannot be told,
	 * before any store call
	 */
	public CompletionStage<List<Check>> decideAsync(LimitedRequest request, List<RateLimitPolicy> applicable) {
		return decide(request, applicable, true);
	}

	private CompletionStage<List<Check>> decide(LimitedRequest request, List<RateLimitPolicy> applicable,
			boolean async) {
		// Loops, not streams, on the way of every request.
		for (int i = 0; i < applicable.size(); i++) {
			if (applicable.get(i).readsParameters()) {
				request.unreadableParameters();
				break;
			}
		}
		List<RateLimitPolicy> enforced = new ArrayList<>(applicable.size());
		List<RateLimitPolicy> shadow = new ArrayList<>(0);
		boolean exemptFromAll = !applicable.isEmpty() && this.exemptions.isExempt(request);
		for (RateLimitPolicy policy : applicable) {
			RateLimitPolicy judged = this.shadowOnly ? policy.inShadow() : policy;
			if (exemptFromAll || judged.isExempt(request)) {
				this.recorder.decided(policy.name(), DecisionOutcome.EXEMPT);
			}
			else {
				judged = judged.inForceFor(request);
				(judged.shadow() ? shadow : enforced).add(judged);
			}
		}
		// Every key on this thread (the request's, with its security context), before the store's step.
		List<Acquisition> taken = acquisitions(request, enforced);
		List<Acquisition> observedTaken = acquisitions(request, shadow);
		return admit(enforced, taken, false, async).thenCompose((checks) -> {
			if (checks == null || shadow.isEmpty() || !checks.stream().allMatch((check) -> check.decision().isAllowed())) {
				return CompletableFuture.completedFuture(checks);
			}
			return admit(shadow, observedTaken, true, async).thenApply((observed) -> {
				if (observed != null) {
					checks.addAll(observed);
				}
				return checks;
			});
		}).thenApply((checks) -> {
			for (String fellBack : request.takeFallbacks()) {
				unreadable(fellBack, true);
			}
			return (checks != null) ? checks : List.of();
		});
	}

	/** Takes a completed step's checks (the limiter completes it even when the store fails), or throws what else failed. */
	private static List<Check> join(CompletionStage<List<Check>> step) {
		try {
			return step.toCompletableFuture().join();
		}
		catch (CompletionException ex) {
			throw (ex.getCause() instanceof RuntimeException cause) ? cause : ex;
		}
	}

	/**
	 * Asks the store once for some policies of a request (all or nothing), bounds the wait of an allowed
	 * one, and records each outcome. Completes with {@code null} when the store failed (the request goes on).
	 */
	private CompletionStage<@Nullable List<Check>> admit(List<RateLimitPolicy> policies, List<Acquisition> acquisitions,
			boolean shadow, boolean async) {
		if (policies.isEmpty()) {
			return CompletableFuture.completedFuture(new ArrayList<>(0));
		}
		long start = System.nanoTime();
		CompletionStage<List<Receipt>> step;
		try {
			step = async ? this.store.admitAllAsync(acquisitions)
					: CompletableFuture.completedFuture(this.store.admitAll(acquisitions));
		}
		catch (RuntimeException ex) {
			step = CompletableFuture.failedFuture(ex);
		}
		return step.handle((receipts, failure) -> {
			this.recorder.storeCall(System.nanoTime() - start);
			if (failure != null) {
				for (RateLimitPolicy policy : policies) {
					this.recorder.decided(policy.name(), DecisionOutcome.STORE_ERROR);
				}
				logger.debug("Rate limit store failed; letting the request through", failure);
				return null;
			}
			return checks(policies, acquisitions, receipts, shadow);
		});
	}

	private static List<Acquisition> acquisitions(LimitedRequest request, List<RateLimitPolicy> policies) {
		List<Acquisition> acquisitions = new ArrayList<>(policies.size());
		for (int i = 0; i < policies.size(); i++) {
			acquisitions.add(policies.get(i).acquisition(request));
		}
		return acquisitions;
	}

	private List<Check> checks(List<RateLimitPolicy> policies, List<Acquisition> acquisitions, List<Receipt> receipts,
			boolean shadow) {
		boolean allowed = true;
		boolean waits = false;
		for (int i = 0; i < policies.size(); i++) {
			// Read again below rather than kept: no list per request (it is the store's own but for a slow-down).
			Decision decision = slowedDown(policies.get(i), receipts.get(i));
			allowed &= decision.isAllowed();
			waits |= decision.waitNanos() > 0;
		}
		boolean refuseToWait = !shadow && allowed && waits && !this.waiting.tryAcquire();
		allowed &= !refuseToWait;
		List<Check> checks = new ArrayList<>(policies.size());
		for (int i = 0; i < policies.size(); i++) {
			RateLimitPolicy policy = policies.get(i);
			Receipt receipt = receipts.get(i);
			Decision slowed = slowedDown(policy, receipt);
			Decision decision = refuseToWait ? refuseToWait(receipt, slowed) : slowed;
			Check check = new Check(policy, acquisitions.get(i), receipt, decision, allowed);
			checks.add(check);
			record(check);
		}
		return checks;
	}

	/**
	 * Counts what a check did to its request (metrics; a shadow policy's rejection is {@code shadow-rejected})
	 * and logs it when it banned, rejected or slowed the request down.
	 * @param check a policy's part of a request, as decided
	 */
	public void record(Check check) {
		RateLimitPolicy policy = check.policy();
		Decision decision = check.decision();
		DecisionOutcome outcome = check.outcome();
		this.recorder.decided(policy.name(),
				(policy.shadow() && outcome == DecisionOutcome.REJECTED) ? DecisionOutcome.SHADOW_REJECTED : outcome);
		if (check.receipt().place() == Receipt.Place.BANNED) {
			this.rejectionLog.banned(policy, check.acquisition(), decision.retryAfterNanos(),
					check.receipt().mark() == Receipt.BAN_STARTED);
		}
		else if (!decision.isAllowed()) {
			this.rejectionLog.rejected(policy, check.acquisition(), policy.shadow());
		}
		else if (outcome == DecisionOutcome.SLOWED) {
			this.rejectionLog.slowed(policy, check.acquisition(), decision.waitNanos(), policy.shadow());
		}
	}

	/**
	 * The store's decision, made to wait when the policy slows its requests down ({@code slow-down}): from
	 * the key's state, so that attempts in flight make later ones wait longer.
	 */
	private static Decision slowedDown(RateLimitPolicy policy, Receipt receipt) {
		Decision decision = receipt.decision();
		long waitNanos = policy.slowDownNanos(receipt);
		return (waitNanos == 0) ? decision
				: Decision.delayed(decision.limit(), decision.remaining(), decision.resetNanos(), decision.nextNanos(),
						waitNanos);
	}

	/**
	 * Too many requests wait already: gives back what the policy took, and rejects the request for a
	 * policy that would have made it wait, after the wait it would have had.
	 */
	private Decision refuseToWait(Receipt receipt, Decision decision) {
		Decision now = decision;
		try {
			Decision after = this.store.giveBack(receipt);
			now = (after != null) ? after : decision;
		}
		catch (RuntimeException ex) {
			logger.debug("Rate limit store failed to give back the tokens of a request refused a wait", ex);
		}
		return (decision.waitNanos() > 0)
				? Decision.rejected(now.limit(), now.remaining(), now.resetNanos(), now.nextNanos(), decision.waitNanos())
				: now;
	}

	/**
	 * Gives back the slots of concurrency limits a request held, once it ended. A store that fails to take
	 * them back is logged: with Redis, the lease expiry frees them.
	 * @param checks the request's checks; those that hold no slot are skipped
	 */
	void release(List<Check> checks) {
		for (Check check : checks) {
			if (check.holdsSlot()) {
				try {
					this.store.release(check.acquisition());
				}
				catch (RuntimeException ex) {
					logger.debug("Rate limit store failed to give back the slot of a request that ended", ex);
				}
			}
		}
	}

	/**
	 * Takes again the slots a request gave back to wait for its turn, all or nothing, in one store call. A
	 * store that fails lets the request go on without them, as it lets a request through.
	 * @param released the checks whose slots were given back
	 * @return their checks now: holding their slots, or with the rejection of a limit that is full
	 */
	List<Check> retake(List<Check> released) {
		List<Acquisition> acquisitions = released.stream().map(Check::acquisition).toList();
		List<Receipt> receipts;
		try {
			receipts = this.store.admitAll(acquisitions);
		}
		catch (RuntimeException ex) {
			logger.debug("Rate limit store failed to take again the slots of a request that waited; it goes on", ex);
			return released.stream().map(Check::withoutSlot).toList();
		}
		boolean allowed = receipts.stream().allMatch((receipt) -> receipt.decision().isAllowed());
		List<Check> checks = new ArrayList<>(released.size());
		for (int i = 0; i < released.size(); i++) {
			Check check = released.get(i);
			Decision decision = receipts.get(i).decision();
			checks.add(new Check(check.policy(), check.acquisition(), receipts.get(i), decision, allowed));
			if (!decision.isAllowed()) {
				this.recorder.decided(check.policy().name(), DecisionOutcome.REJECTED);
				this.rejectionLog.rejected(check.policy(), check.acquisition(), false);
			}
		}
		return checks;
	}

	/**
	 * Frees the place in the queue of waiting requests that an allowed request with a wait held, once it
	 * has waited (or given up).
	 */
	public void doneWaiting() {
		this.waiting.release();
	}

	/**
	 * Undoes a step decided for a request that went away before it was answered (a client that disconnected
	 * while the store decided): the waiting place and the turn of a step that made it wait, and its slots.
	 * What else it took stays taken, as for any request that was admitted.
	 * @param step the step's checks
	 */
	public void abandon(List<Check> step) {
		// The waiting place was taken when the enforced checks allowed a wait (shadow ones aside).
		RequestDecision decided = new RequestDecision(step);
		if (decided.isAllowed() && decided.waitNanos() > 0) {
			doneWaiting();
			giveBackTurn(step);
		}
		release(step);
	}

	/**
	 * Gives back the turn of a request that ended before it came (delay mode, {@code slow-down}): what the
	 * checks that made it wait took.
	 * @param step the checks of the step that made it wait
	 */
	public void giveBackTurn(List<Check> step) {
		step.stream().filter((check) -> check.enforced() && check.decision().waitNanos() > 0).forEach(this::giveBack);
	}

	/**
	 * Settles a check that counts only some responses, once the response is known: a response that does
	 * not count gives back what its attempt still holds; one that counts keeps it.
	 * @param check a check that {@linkplain Check#countsLater() counts later}
	 * @param status the response status, {@link #NO_RESPONSE} when no response completed (it keeps its cost),
	 * or {@link #OUTAGE} (it is given back)
	 * @return the check, with what the give-back left for the headers
	 */
	Check complete(Check check, int status) {
		if (status == NO_RESPONSE || (status != OUTAGE && check.policy().count().counts(status))) {
			return check;
		}
		Decision after = giveBack(check);
		return (after != null) ? check.with(after) : check;
	}

	/**
	 * Gives back what one admitted attempt holds; a store that fails keeps the cost (never generous).
	 * @return what the store then decides, or {@code null} when it cannot tell
	 */
	@Nullable Decision giveBack(Check check) {
		long start = System.nanoTime();
		try {
			return this.store.giveBack(check.receipt());
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
	 * Counts a request whose key, plan or exemption a policy could not tell ({@link UnreadableRequestException},
	 * thrown before any store call): refused with {@code 400} when an enforced policy applies (that policy
	 * counts {@code unreadable}, and shadow policies that fell back before it {@code shadow-unreadable}); let
	 * through when only shadow policies apply, which never change a response (each counts {@code shadow-unreadable}).
	 * @return whether the request is refused
	 */
	public boolean refuses(UnreadableRequestException ex, LimitedRequest request, List<RateLimitPolicy> policies) {
		List<String> fellBack = request.takeFallbacks();
		boolean enforced = !this.shadowOnly && policies.stream().anyMatch((policy) -> !policy.shadow());
		if (enforced) {
			for (String shadow : fellBack) {
				unreadable(shadow, true);
			}
		}
		String failed = ex.policy();
		for (RateLimitPolicy policy : policies) {
			if (!enforced || failed == null || failed.equals(policy.name())) {
				unreadable(policy.name(), !enforced || policy.shadow());
			}
		}
		return enforced;
	}

	private void unreadable(String policy, boolean shadow) {
		this.recorder.decided(policy, shadow ? DecisionOutcome.SHADOW_UNREADABLE : DecisionOutcome.UNREADABLE);
	}
}
