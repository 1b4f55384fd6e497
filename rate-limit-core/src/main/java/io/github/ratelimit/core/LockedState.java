package io.github.ratelimit.core;

import org.jspecify.annotations.Nullable;

/**
 * The states decided under a lock per key (the windows and the concurrency count), whose state is a few
 * numbers: every operation holds the state's monitor, and a retired state ({@link #moveTo(Limit, long)})
 * answers {@code null} to all of them. A subclass says what each operation does to a state in force,
 * called with the lock held.
 */
abstract sealed class LockedState implements LimiterState
		permits FixedWindow, SlidingWindowLog, SlidingWindowCounter, ConcurrencyState {

	final Limit limit;

	private boolean retired;

	LockedState(Limit limit) {
		this.limit = limit;
	}

	@Override
	public final Limit limit() {
		return this.limit;
	}

	/** The windows and the concurrency count never wait: {@code maxWaitNanos} plays no part. */
	@Override
	public final synchronized @Nullable Decision tryAcquire(long nowNanos, long cost, long maxWaitNanos) {
		return this.retired ? null : decideLocked(nowNanos, cost, true);
	}

	@Override
	public final synchronized @Nullable Decision check(long nowNanos, long cost) {
		return this.retired ? null : decideLocked(nowNanos, cost, false);
	}

	@Override
	public final synchronized @Nullable Decision release(long nowNanos, long cost) {
		return this.retired ? null : releaseLocked(nowNanos, cost);
	}

	@Override
	public final synchronized @Nullable Decision giveBack(long nowNanos, long cost, long mark, Limit admittedUnder) {
		return this.retired ? null : giveBackLocked(nowNanos, cost, mark, admittedUnder);
	}

	@Override
	public final synchronized @Nullable Decision peek(long nowNanos) {
		return this.retired ? null : peekLocked(nowNanos);
	}

	@Override
	public final synchronized @Nullable LimiterState moveTo(Limit limit, long nowNanos) {
		LimiterState.requireSameAlgorithm(this.limit, limit);
		if (this.retired) {
			return null;
		}
		this.retired = true;
		return successor(limit, nowNanos);
	}

	/**
	 * Decides on {@code cost} tokens: when they are available, takes them ({@code take}, as
	 * {@link #tryAcquire}) or only reads the state ({@link #check}); otherwise rejects, taking nothing.
	 */
	abstract Decision decideLocked(long nowNanos, long cost, boolean take);

	/** As {@link #release}, on a state in force. */
	abstract Decision releaseLocked(long nowNanos, long cost);

	/** As {@link #giveBack}, on a state in force. */
	abstract Decision giveBackLocked(long nowNanos, long cost, long mark, Limit admittedUnder);

	/** As {@link #peek}, on a state in force. */
	abstract Decision peekLocked(long nowNanos);

	/** The state under another limit, carrying over what this one has spent (this one is retired already). */
	abstract LimiterState successor(Limit limit, long nowNanos);

}
