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
 * Moved to another limit of the same period ({@link #moveTo(Limit, long)}), both counters carry over. Moved
 * to another period, the estimate now (rounded up) becomes the count of the new period's current
 * window, and nothing of the previous window is left to weigh: what was spent stays spent.
 * <p>
 * Concurrency: a lock per key; exact under any number of threads.
 */
final class SlidingWindowCounter extends LockedState {

	private final long period;

	private long windowStart = Long.MIN_VALUE;

	private long current;

	private long previous;

	/**
	 * Creates empty counters.
	 * @param limit the limit it enforces
	 */
	SlidingWindowCounter(Limit limit) {
		super(limit);
		this.period = limit.period().toNanos();
	}

	@Override
	Decision decideLocked(long nowNanos, long cost, boolean take) {
		roll(nowNanos);
		long max = this.limit.limit();
		long p = this.period;
		long overlap = overlap(nowNanos);
		if (this.previous * overlap + (this.current + cost) * p > max * p) {
			long retryAfter = untilRoomFor(overlap, cost);
			return Decision.rejected(max, remaining(overlap), reset(overlap), retryAfter, retryAfter);
		}
		if (take) {
			this.current += cost;
		}
		return Decision.allowed(max, remaining(overlap), reset(overlap), next(overlap, cost));
	}

	@Override
	Decision releaseLocked(long nowNanos, long cost) {
		roll(nowNanos);
		this.current = Math.max(0, this.current - cost);
		long overlap = overlap(nowNanos);
		return Decision.allowed(this.limit.limit(), remaining(overlap), reset(overlap), next(overlap, cost));
	}

	/**
	 * The start of the window the acquisition was counted in: its reset was that window's end plus a
	 * period. Window starts are multiples of the period; a caller whose clock reading was older than the
	 * window (counted in it all the same) lands between two, and its window is the next start.
	 */
	@Override
	public long mark(long nowNanos, Decision admitted) {
		long start = nowNanos + admitted.resetNanos() - 2 * this.period;
		long aligned = Math.floorDiv(start, this.period) * this.period;
		return (aligned == start) ? start : aligned + this.period;
	}

	/**
	 * Only from the window the acquisition was counted in: the current one, or the previous one once it
	 * has rolled (where it still weighs); nothing once that window has left the estimate.
	 */
	@Override
	Decision giveBackLocked(long nowNanos, long cost, long mark, Limit admittedUnder) {
		roll(nowNanos);
		if (admittedUnder.period().toNanos() == this.period) {
			if (this.windowStart == mark) {
				this.current -= Math.min(cost, this.current);
			}
			else if (this.windowStart == mark + this.period) {
				this.previous -= Math.min(cost, this.previous);
			}
		}
		return peekLocked(nowNanos);
	}

	@Override
	Decision peekLocked(long nowNanos) {
		roll(nowNanos);
		long overlap = overlap(nowNanos);
		return Decision.allowed(this.limit.limit(), remaining(overlap), reset(overlap), next(overlap, 1));
	}

	@Override
	LimiterState successor(Limit limit, long nowNanos) {
		roll(nowNanos);
		SlidingWindowCounter next = new SlidingWindowCounter(limit);
		if (next.period == this.period) {
			next.windowStart = this.windowStart;
			next.current = this.current;
			next.previous = this.previous;
		}
		else if (this.current > 0 || this.previous > 0) {
			long p = this.period;
			long weighted = -Math.floorDiv(-Math.multiplyExact(this.previous, overlap(nowNanos)), p);
			next.windowStart = Math.floorDiv(nowNanos, next.period) * next.period;
			// At most 2^61 / period: every product of the arithmetic then stays below 2^63. Such a count is far
			// above the limit (which Limit keeps below 2^61 / period), so the key stays spent; only a count of
			// more than that many (a plan of 100,000 a minute moved to one of a day) is not carried in full.
			next.current = Math.min(weighted + this.current, Limit.MAX_COUNTER_PRODUCT / next.period);
		}
		return next;
	}

	/**
	 * The time until the estimate admits one more request of {@code cost} than it does now (the whole
	 * quota at most); zero when nothing is spent.
	 */
	private long next(long overlap, long cost) {
		if (this.current == 0 && this.previous == 0) {
			return 0;
		}
		long c = Math.max(1, cost);
		long room = Math.min(this.limit.limit(), (remaining(overlap) / c + 1) * c);
		return untilRoomFor(overlap, room);
	}

	/**
	 * The time until the estimate leaves room for {@code room} tokens, which it does not now: within
	 * this window when the previous window's weight shrinks enough, else once this window has become
	 * the previous one, weighing less and less.
	 */
	private long untilRoomFor(long overlap, long room) {
		long max = this.limit.limit();
		long p = this.period;
		long left = max - this.current - room;
		if (left >= 0) {
			return overlap - Math.floorDiv(left * p, this.previous);
		}
		long wait = (this.current == 0) ? 0 : Math.max(0, p - Math.floorDiv((max - room) * p, this.current));
		return overlap + wait;
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
