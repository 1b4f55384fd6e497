package io.github.ratelimit.core;

import org.jspecify.annotations.Nullable;

/**
 * One key's algorithm state alone, without a store: the engine's package-private {@link LimiterState},
 * opened for the Lua agreement test (the reference the scripts are compared with) and the benchmarks'
 * breakdown (the algorithm without the store's lookup). It lives in the engine's package, in this
 * unpublished module, so that the states stay out of the published API. Thread-safe, as the state is.
 */
public final class BareState {

	private final LimiterState state;

	private BareState(LimiterState state) {
		this.state = state;
	}

	/**
	 * Creates the state of a key that has not been seen yet.
	 * @param limit the limit it enforces
	 * @return a fresh state
	 */
	public static BareState of(Limit limit) {
		return new BareState(limit.newState());
	}

	/**
	 * Returns the limit this state enforces.
	 * @return the limit
	 */
	public Limit limit() {
		return this.state.limit();
	}

	/**
	 * As {@link LimiterState#tryAcquire(long, long, long)}.
	 * @param nowNanos the current time (epoch nanoseconds)
	 * @param cost the tokens the request takes
	 * @param maxWaitNanos how long the request may wait for its turn
	 * @return the decision; {@code null} when retired
	 */
	public @Nullable Decision tryAcquire(long nowNanos, long cost, long maxWaitNanos) {
		return this.state.tryAcquire(nowNanos, cost, maxWaitNanos);
	}

	/**
	 * As {@link LimiterState#check(long, long)}.
	 * @param nowNanos the current time (epoch nanoseconds)
	 * @param cost the tokens the request would take
	 * @return the decision; {@code null} when retired
	 */
	public @Nullable Decision check(long nowNanos, long cost) {
		return this.state.check(nowNanos, cost);
	}

	/**
	 * As {@link LimiterState#release(long, long)}.
	 * @param nowNanos the current time (epoch nanoseconds)
	 * @param cost the tokens to give back
	 * @return how the state reads afterwards; {@code null} when retired
	 */
	public @Nullable Decision release(long nowNanos, long cost) {
		return this.state.release(nowNanos, cost);
	}

	/**
	 * As {@link LimiterState#peek(long)}.
	 * @param nowNanos the current time (epoch nanoseconds)
	 * @return what a request of cost 0 would be told; {@code null} when retired
	 */
	public @Nullable Decision peek(long nowNanos) {
		return this.state.peek(nowNanos);
	}

	/**
	 * As {@link LimiterState#moveTo(Limit, long)}.
	 * @param limit the new limit, of this state's algorithm
	 * @param nowNanos the current time (epoch nanoseconds)
	 * @return the successor; {@code null} when this state was retired already
	 */
	public @Nullable BareState moveTo(Limit limit, long nowNanos) {
		LimiterState next = this.state.moveTo(limit, nowNanos);
		return (next != null) ? new BareState(next) : null;
	}
}
