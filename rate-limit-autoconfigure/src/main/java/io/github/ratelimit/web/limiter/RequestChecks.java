package io.github.ratelimit.web.limiter;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.web.CountMode;

/**
 * One request's {@link Check checks}, as the phases of its exchange add them, on any web stack: what each
 * phase decided, the count that waits for the response's status, the slots of concurrency limits a request
 * holds, gives back to wait for its turn, and takes again. A web stack's exchange does the I/O (headers, the
 * rejection, holding the response, waiting); this class keeps the books, so that a policy decided in one
 * phase is never decided again and what a request took is given back exactly once. Thread-safe: the server
 * may end a request (a client gone) while a phase runs on another thread. The books are kept under a lock
 * that no store call is made under (a Redis call would hold it, and pin a virtual thread).
 */
public final class RequestChecks {

	private final RequestLimiter limiter;

	private final List<Check> checks = new ArrayList<>(2);

	/** Whether checks wait for the response's status; cleared by whichever settles them first. */
	private final AtomicBoolean countPending = new AtomicBoolean();

	private final AtomicBoolean released = new AtomicBoolean();

	/** The concurrency limits whose slots the request gave back to wait for its turn: taken again after it. */
	private List<Check> slotsToRetake = List.of();

	/**
	 * Creates the checks of one request.
	 * @param limiter decides them
	 */
	public RequestChecks(RequestLimiter limiter) {
		this.limiter = limiter;
	}

	/**
	 * Adds what a phase decided. A request that ended meanwhile (the server released it) gives the step's
	 * slots back at once.
	 * @param step the phase's checks
	 * @return the result over every check so far: a rejection, or what the headers say
	 */
	public RequestDecision add(List<Check> step) {
		RequestDecision result;
		synchronized (this) {
			this.checks.addAll(step);
			result = new RequestDecision(this.checks);
		}
		if (this.released.get()) {
			this.limiter.release(step);
		}
		return result;
	}

	/**
	 * Adds what was decided once the response was written already: too late to wait for a turn (the waiting
	 * place it was given is given back), and counted as the request ends.
	 * @param step the checks
	 * @return their result
	 */
	public RequestDecision addAnswered(List<Check> step) {
		synchronized (this) {
			this.checks.addAll(step);
		}
		RequestDecision result = new RequestDecision(step);
		if (result.waitNanos() > 0) {
			this.limiter.doneWaiting();
		}
		this.countPending.set(step.stream().anyMatch(Check::countsLater));
		return result;
	}

	/**
	 * Starts waiting for the response's status when a check counts only some responses.
	 * @return whether this call started it (then the response is to be held back until it is counted)
	 */
	public boolean holdIfCountsLater() {
		return snapshot().stream().anyMatch(Check::countsLater) && this.countPending.compareAndSet(false, true);
	}

	/**
	 * Returns whether the request still waits for its status to be counted.
	 * @return {@code true} until it is counted, or given back
	 */
	public boolean countsLater() {
		return this.countPending.get();
	}

	/**
	 * Returns how long an allowed step makes the request wait for its turn: the longest wait of its enforced
	 * checks (delay mode, {@code slow-down}).
	 * @param step the step
	 * @return nanoseconds; 0 to proceed now
	 */
	public static long waitNanos(List<Check> step) {
		long waitNanos = 0;
		for (int i = 0; i < step.size(); i++) {
			waitNanos = Math.max(waitNanos, step.get(i).enforced() ? step.get(i).decision().waitNanos() : 0);
		}
		return waitNanos;
	}

	/**
	 * A request that waits for its turn holds no slot of a concurrency limit meanwhile: they are given back
	 * now and taken again once its turn comes ({@link #retakeSlots}).
	 */
	public void releaseSlotsToWait() {
		List<Check> holding;
		synchronized (this) {
			holding = this.checks.stream().filter(Check::holdsSlot).toList();
			if (holding.isEmpty()) {
				return;
			}
			this.checks.replaceAll((check) -> check.holdsSlot() ? check.withoutSlot() : check);
			this.slotsToRetake = holding;
		}
		this.limiter.release(holding);
	}

	/**
	 * Once the request's turn came: takes again the slots it gave back to wait. Refused (its concurrency
	 * limits are full now), it gives back what it took, as a request rejected in one store call would. A
	 * request that ended meanwhile gives back what it took again.
	 * @return the result when the request is now refused (to be answered with its 429); {@code null} when it
	 * proceeds, also when it ended meanwhile (its slots were given back for good)
	 */
	public @Nullable RequestDecision retakeSlots() {
		List<Check> released;
		synchronized (this) {
			released = this.slotsToRetake;
			if (released.isEmpty() || this.released.get()) {
				return null;
			}
			this.slotsToRetake = List.of();
		}
		List<Check> retaken = this.limiter.retake(released);
		RequestDecision result;
		List<Check> toGiveBack;
		synchronized (this) {
			result = replace(retaken);
			toGiveBack = result.isAllowed() ? List.of() : keptCosts();
		}
		if (this.released.get()) {
			// Ended while its slots were taken again: they go back now.
			this.limiter.release(retaken);
		}
		toGiveBack.forEach(this.limiter::giveBack);
		return result.isAllowed() ? null : result;
	}

	/**
	 * A refusal of a phase that must leave nothing spent (a gateway route's, decided after the path rules as
	 * if in one store call): every attempt earlier phases kept is given back.
	 */
	public void giveBackKept() {
		giveBackPending();
		keptCosts().forEach(this.limiter::giveBack);
	}

	/** A refusal after earlier phases admitted attempts: the count they wait for is off, so they give back. */
	public void giveBackPending() {
		if (this.countPending.compareAndSet(true, false)) {
			snapshot().stream().filter(Check::countsLater).forEach(this.limiter::giveBack);
		}
	}

	/**
	 * Settles the checks that count only some responses, once the status is known (once: whoever comes
	 * first, the response being committed or the request ending).
	 * @param status the response's status, or {@link RequestLimiter#NO_RESPONSE} (every attempt keeps its
	 * cost: no store call)
	 * @return the result the headers then say; {@code null} when there was nothing (left) to count
	 */
	public @Nullable RequestDecision complete(int status) {
		if (!this.countPending.compareAndSet(true, false)) {
			return null;
		}
		// Settled by the store outside the lock, then put in place under it.
		List<Check> settled = snapshot().stream().filter(Check::countsLater)
			.map((check) -> this.limiter.complete(check, status))
			.toList();
		return replace(settled);
	}

	/**
	 * Returns whether some check holds a slot of a concurrency limit.
	 * @return {@code true} when the request's end must give one back
	 */
	public boolean holdSlots() {
		return snapshot().stream().anyMatch(Check::holdsSlot);
	}

	/** Gives back the slots of concurrency limits, the first time only. */
	public void release() {
		if (this.released.compareAndSet(false, true)) {
			this.limiter.release(snapshot());
		}
	}

	/** Puts checks in the place of those of their policies, and returns the result over every check now. */
	private synchronized RequestDecision replace(List<Check> changed) {
		for (Check check : changed) {
			this.checks.replaceAll((held) -> (held.policy() == check.policy()) ? check : held);
		}
		return new RequestDecision(this.checks);
	}

	/** The checks whose request keeps what they took, of policies that count every response: given back on a refusal. */
	private synchronized List<Check> keptCosts() {
		return this.checks.stream()
			.filter((check) -> check.kept() && check.policy().count() == CountMode.ALL && check.receipt().holdsCost())
			.toList();
	}

	/** The checks as they are now; the store is never called under the lock. */
	private synchronized List<Check> snapshot() {
		return new ArrayList<>(this.checks);
	}
}
