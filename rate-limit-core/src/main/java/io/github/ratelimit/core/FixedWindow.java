package io.github.ratelimit.core;

/**
 * One key's fixed window: at most {@code limit} tokens per window of {@code period}, windows aligned
 * to the epoch ({@code [k * period, (k + 1) * period)}) so every instance agrees on boundaries. A
 * rejected request may retry when the window ends.
 * <p>
 * Its known weakness: a client may spend the whole limit at the end of one window and again at the
 * start of the next, so up to {@code 2 * limit} requests pass within one period around a boundary.
 * <p>
 * Concurrency: a lock per key (the state is two numbers); exact under any number of threads. A caller
 * whose clock reading is older than the current window is counted in the current window.
 * <p>
 * Moved to another limit ({@link #moveTo(Limit, long)}), the count carries over into the successor, whose
 * new limit applies at once; a new period takes effect from the next window, since the current one has
 * its boundaries already.
 */
final class FixedWindow extends LockedState {

	private final long period;

	private long windowEnd = Long.MIN_VALUE;

	private long count;

	/**
	 * Creates an empty window.
	 * @param limit the limit it enforces
	 */
	FixedWindow(Limit limit) {
		super(limit);
		this.period = limit.period().toNanos();
	}

	@Override
	Decision decideLocked(long nowNanos, long cost, boolean take) {
		roll(nowNanos);
		long max = this.limit.limit();
		long untilEnd = this.windowEnd - nowNanos;
		if (this.count + cost > max) {
			return Decision.rejected(max, Math.max(0, max - this.count), untilEnd, untilEnd, untilEnd);
		}
		if (!take) {
			return reading(nowNanos);
		}
		this.count += cost;
		// Additional quota comes with the next window, when the whole quota does.
		return Decision.allowed(max, max - this.count, untilEnd, untilEnd);
	}

	@Override
	Decision releaseLocked(long nowNanos, long cost) {
		roll(nowNanos);
		this.count = Math.max(0, this.count - cost);
		if (this.count == 0) {
			// Nothing spent: forgotten, as a store forgets a fresh state (the next window is of the period
			// in force even when this one was carried over from another).
			this.windowEnd = Long.MIN_VALUE;
		}
		return reading(nowNanos);
	}

	@Override
	public long mark(long nowNanos, Decision admitted) {
		return nowNanos + admitted.resetNanos();
	}

	/** Only from the window the acquisition was counted in (the mark is its end). */
	@Override
	Decision giveBackLocked(long nowNanos, long cost, long mark, Limit admittedUnder) {
		roll(nowNanos);
		if (this.windowEnd == mark) {
			this.count = Math.max(0, this.count - cost);
		}
		return reading(nowNanos);
	}

	@Override
	Decision peekLocked(long nowNanos) {
		roll(nowNanos);
		return reading(nowNanos);
	}

	/** The window as it reads, not rolled first. */
	private Decision reading(long nowNanos) {
		long reset = (this.count > 0) ? this.windowEnd - nowNanos : 0;
		return Decision.allowed(this.limit.limit(), Math.max(0, this.limit.limit() - this.count), reset, reset);
	}

	@Override
	LimiterState successor(Limit limit, long nowNanos) {
		FixedWindow next = new FixedWindow(limit);
		if (nowNanos < this.windowEnd && this.count > 0) {
			// The current window keeps its end; once it has ended (or when nothing of it is spent, like a
			// state a store has forgotten), the next one is of the new period.
			next.windowEnd = this.windowEnd;
			next.count = this.count;
		}
		return next;
	}

	private void roll(long nowNanos) {
		if (nowNanos >= this.windowEnd) {
			long start = Math.floorDiv(nowNanos, this.period) * this.period;
			this.windowEnd = start + this.period;
			this.count = 0;
		}
	}
}
