package io.github.ratelimit.core;

/**
 * One key's sliding window counter: two counters, the current epoch-aligned window's and the previous
 * one's. A request is allowed when {@code previous * (period - elapsed) / period + current + cost <=
 * limit}, {@code elapsed} being the time since the current window began: the previous window's count
 * weighted by how much of it the sliding window still overlaps. It smooths the fixed window's boundary
 * burst at the price of assuming the previous window's requests were spread evenly.
 * <p>
 * The arithmetic is exact (integers in nanoseconds; {@link Limit} keeps {@code limit * period} below
 * 2^61 so nothing overflows), so the remaining count, the reset and the retry time are exact for the
 * estimate: a request retried after {@link Decision#retryAfterNanos()} is allowed.
 * <p>
 * Concurrency: a lock per key; exact under any number of threads.
 */
public final class SlidingWindowCounter implements LimiterState {

	private final Limit limit;

	private final long period;

	private long windowStart = Long.MIN_VALUE;

	private long current;

	private long previous;

	/**
	 * Creates empty counters.
	 * @param limit the limit it enforces
	 */
	public SlidingWindowCounter(Limit limit) {
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
		long p = this.period;
		long overlap = overlap(nowNanos);
		if (this.previous * overlap + (this.current + cost) * p > max * p) {
			return rejection(overlap, cost);
		}
		this.current += cost;
		return Decision.allowed(max, remaining(overlap), reset(overlap));
	}

	@Override
	public synchronized Decision check(long nowNanos, long cost) {
		roll(nowNanos);
		long max = this.limit.limit();
		long p = this.period;
		long overlap = overlap(nowNanos);
		if (this.previous * overlap + (this.current + cost) * p > max * p) {
			return rejection(overlap, cost);
		}
		return Decision.allowed(max, remaining(overlap), reset(overlap));
	}

	private Decision rejection(long overlap, long cost) {
		long max = this.limit.limit();
		long p = this.period;
		long retryAfter;
		long room = max - this.current - cost;
		if (room >= 0) {
			// The previous window's weight has to shrink enough, within this window.
			retryAfter = overlap - Math.floorDiv(room * p, this.previous);
		}
		else {
			// Only once this window has become the previous one, weighing less and less.
			long wait = (this.current == 0) ? 0 : Math.max(0, p - Math.floorDiv((max - cost) * p, this.current));
			retryAfter = overlap + wait;
		}
		return Decision.rejected(max, remaining(overlap), reset(overlap), retryAfter);
	}

	@Override
	public synchronized Decision release(long nowNanos, long cost) {
		roll(nowNanos);
		this.current = Math.max(0, this.current - cost);
		return peek(nowNanos);
	}

	@Override
	public synchronized Decision peek(long nowNanos) {
		roll(nowNanos);
		long overlap = overlap(nowNanos);
		return Decision.allowed(this.limit.limit(), remaining(overlap), reset(overlap));
	}

	private long remaining(long overlap) {
		long max = this.limit.limit();
		long p = this.period;
		return Math.max(0, Math.floorDiv(max * p - this.previous * overlap - this.current * p, p));
	}

	private long reset(long overlap) {
		if (this.current > 0) {
			return overlap + this.period;
		}
		return (this.previous > 0) ? overlap : 0;
	}

	/** The part of the previous window the sliding window still covers, in (0, period]. */
	private long overlap(long nowNanos) {
		return this.period - Math.max(0, nowNanos - this.windowStart);
	}

	private void roll(long nowNanos) {
		long start = Math.floorDiv(nowNanos, this.period) * this.period;
		if (start <= this.windowStart) {
			return;
		}
		this.previous = (start == this.windowStart + this.period) ? this.current : 0;
		this.current = 0;
		this.windowStart = start;
	}
}
