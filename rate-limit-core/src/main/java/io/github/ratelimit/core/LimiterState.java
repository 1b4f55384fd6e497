package io.github.ratelimit.core;

import org.jspecify.annotations.Nullable;

/**
 * The state of one key under one {@link Limit}, with the algorithm that decides on it.
 * Implementations are thread-safe and exact: however many threads call at once, no more is allowed
 * than the limit permits.
 * <p>
 * A key's limit may change while it is in use (a client's plan changes, or the policy is changed at
 * run time): {@link #moveTo(Limit, long)} then retires the state and hands its successor, which keeps
 * what was spent. Every operation on a retired state returns {@code null}, so that a caller that still
 * holds it asks its store again and meets the successor: nobody spends two budgets.
 */
interface LimiterState {

	/**
	 * Returns the limit this state enforces.
	 * @return the limit
	 */
	Limit limit();

	/**
	 * Takes {@code cost} tokens when they are available, or will be within {@code maxWaitNanos}
	 * (then they are reserved, and the decision says how long to wait).
	 * @param nowNanos the current time (epoch nanoseconds)
	 * @param cost the tokens the request takes; positive and at most the burst
	 * @param maxWaitNanos how long the request may wait for its turn; 0 never waits
	 * @return the decision; when rejected, nothing was taken; {@code null} when this state was retired
	 * by {@link #moveTo(Limit, long)}
	 */
	@Nullable Decision tryAcquire(long nowNanos, long cost, long maxWaitNanos);

	/**
	 * Tells whether {@code cost} tokens are available now, without taking them: for budgets that count a
	 * request only once its response is known.
	 * @param nowNanos the current time (epoch nanoseconds)
	 * @param cost the tokens the request would take; positive and at most the burst
	 * @return when they are available, the state as it reads now (nothing taken, as {@link #peek(long)});
	 * otherwise the rejection {@link #tryAcquire(long, long, long)} would give without waiting;
	 * {@code null} when retired
	 */
	@Nullable Decision check(long nowNanos, long cost);

	/**
	 * Gives back tokens taken by {@link #tryAcquire(long, long, long)}, for a request another limit rejected.
	 * @param nowNanos the current time (epoch nanoseconds)
	 * @param cost the tokens to give back
	 * @return how the state reads afterwards, as an allowing decision; {@code null} when retired
	 */
	@Nullable Decision release(long nowNanos, long cost);

	/**
	 * Returns where an acquisition this state has just allowed took its cost, for a later
	 * {@link #giveBack}: a bucket's {@code tat} after the step, a window's end, a log entry's time, a
	 * counter's window start. Derived from the decision, so that it costs the hot path nothing.
	 * @param nowNanos the time the acquisition was decided at
	 * @param admitted the allowing decision
	 * @return the mark
	 */
	long mark(long nowNanos, Decision admitted);

	/**
	 * Gives back what an acquisition still holds, exactly: only the part of the cost taken at
	 * {@code mark} that is still spent now, under the limit in force (a window that ended holds nothing,
	 * a log entry that aged out holds nothing, a bucket's step holds only what refill has not restored).
	 * Never more generous than if the acquisition had never been allowed.
	 * @param nowNanos the current time (epoch nanoseconds)
	 * @param cost the cost the acquisition took
	 * @param mark its {@link #mark}
	 * @param admittedUnder the limit it was allowed under (this state's, or one it moved from)
	 * @return how the state reads afterwards, as an allowing decision; {@code null} when retired
	 */
	@Nullable Decision giveBack(long nowNanos, long cost, long mark, Limit admittedUnder);

	/**
	 * Reads the state without changing it.
	 * @param nowNanos the current time (epoch nanoseconds)
	 * @return what a request of cost 0 would be told; {@code null} when retired
	 */
	@Nullable Decision peek(long nowNanos);

	/**
	 * Retires this state and returns the same key's state under another limit of the same algorithm,
	 * carrying over what was spent: a bucket's spent tokens stay spent (its {@code tat} rescaled,
	 * {@code tat' = now + (tat - now) * T' / T}, also beyond a smaller new bucket, so that a limit
	 * going down and up again never gives a second budget), a window's count stays counted (a new period
	 * takes effect when the current window ends), a log keeps its entries.
	 * @param limit the new limit, of this state's algorithm
	 * @param nowNanos the current time (epoch nanoseconds)
	 * @return the successor; {@code null} when this state was retired already (ask the store again)
	 * @throws IllegalArgumentException when the new limit has another algorithm
	 */
	@Nullable LimiterState moveTo(Limit limit, long nowNanos);

	/**
	 * Checks that a state of one limit may move to another: only within an algorithm.
	 * @param current the state's limit
	 * @param next the limit it would move to
	 * @throws IllegalArgumentException when the algorithms differ
	 */
	static void requireSameAlgorithm(Limit current, Limit next) {
		if (next.algorithm() != current.algorithm()) {
			throw new IllegalArgumentException("cannot move a " + current.algorithm() + " state to " + next);
		}
	}
}
