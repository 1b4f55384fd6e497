package io.github.ratelimit.core;

/**
 * The state of one key under one {@link Limit}, with the algorithm that decides on it.
 * Implementations are thread-safe and exact: however many threads call at once, no more is allowed
 * than the limit permits.
 */
public interface LimiterState {

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
	 * @return the decision; when rejected, nothing was taken
	 */
	Decision tryAcquire(long nowNanos, long cost, long maxWaitNanos);

	/**
	 * Tells whether {@code cost} tokens are available now, without taking them: for budgets that count a
	 * request only once its response is known.
	 * @param nowNanos the current time (epoch nanoseconds)
	 * @param cost the tokens the request would take; positive and at most the burst
	 * @return when they are available, the state as it reads now (nothing taken, as {@link #peek(long)});
	 * otherwise the rejection {@link #tryAcquire(long, long, long)} would give without waiting
	 */
	Decision check(long nowNanos, long cost);

	/**
	 * Gives back tokens taken by {@link #tryAcquire(long, long, long)}, for a request another limit rejected.
	 * @param nowNanos the current time (epoch nanoseconds)
	 * @param cost the tokens to give back
	 * @return how the state reads afterwards, as an allowing decision
	 */
	Decision release(long nowNanos, long cost);

	/**
	 * Reads the state without changing it.
	 * @param nowNanos the current time (epoch nanoseconds)
	 * @return what a request of cost 0 would be told
	 */
	Decision peek(long nowNanos);
}
