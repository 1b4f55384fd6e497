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
 */
public final class FixedWindow implements LimiterState {

	private final Limit limit;

	private final long period;

	private long windowStart = Long.MIN_VALUE;

	private long count;

	/**
	 * Creates an empty window.
	 * @param limit the limit it enforces
	 */
	public FixedWindow(Limit limit) {
		this.limit = limit;
		this.period = limit.period().toNanos();
	}

	@Override
	public Limit limit() {
		return this.limit;
	}

	@Override
	public synchronized Decision tryAcquire(long nowNanos, long cost, long maxWaitNanos) {
		roll(nowNanos);
		long max = this.limit.limit();
		long untilEnd = this.windowStart + this.period - nowNanos;
		if (this.count + cost > max) {
			return Decision.rejected(max, max - this.count, untilEnd, untilEnd, untilEnd);
		}
		this.count += cost;
		// Additional quota comes with the next window, when the whole quota does.
		return Decision.allowed(max, max - this.count, untilEnd, untilEnd);
	}

	@Override
	public synchronized Decision check(long nowNanos, long cost) {
		roll(nowNanos);
		long max = this.limit.limit();
		if (this.count + cost > max) {
			long untilEnd = this.windowStart + this.period - nowNanos;
			return Decision.rejected(max, max - this.count, untilEnd, untilEnd, untilEnd);
		}
		return peekLocked(nowNanos);
	}

	@Override
	public synchronized Decision release(long nowNanos, long cost) {
		roll(nowNanos);
		this.count = Math.max(0, this.count - cost);
		return peekLocked(nowNanos);
	}

	@Override
	public synchronized Decision peek(long nowNanos) {
		roll(nowNanos);
		return peekLocked(nowNanos);
	}

	private Decision peekLocked(long nowNanos) {
		long reset = (this.count > 0) ? this.windowStart + this.period - nowNanos : 0;
		return Decision.allowed(this.limit.limit(), this.limit.limit() - this.count, reset, reset);
	}

	private void roll(long nowNanos) {
		long start = Math.floorDiv(nowNanos, this.period) * this.period;
		if (start > this.windowStart) {
			this.windowStart = start;
			this.count = 0;
		}
	}
}
