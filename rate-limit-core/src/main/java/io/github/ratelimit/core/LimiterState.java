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
