package io.github.ratelimit.core;

import org.jspecify.annotations.Nullable;

import java.util.Arrays;

/**
 * One key's sliding window log: the timestamps of the tokens admitted in the last {@code period}, so
 * that at most {@code limit} fall in any interval of length {@code period}, exactly. A token admitted
 * at {@code t} counts until {@code t + period}; a rejected request may retry when enough of the oldest
 * tokens have left the window.
 * <p>
 * Memory: a ring buffer of 8-byte timestamps that grows with use up to {@code limit} entries, so a key
 * costs up to {@code 8 * limit} bytes; {@link Limit} refuses limits above
 * {@value Limit#MAX_LOG_LIMIT}.
 * <p>
 * Concurrency: a lock per key; exact under any number of threads. Timestamps never go backwards in
 * the log, even for a caller whose clock reading is a little older.
 * <p>
 * Moved to another limit ({@link #moveTo(Limit, long)}), the entries carry over: each counts until its
 * time plus the new period, against the new limit.
 */
final class SlidingWindowLog implements LimiterState {

	private final Limit limit;

	private final long period;

	private long[] log;

	private int head;

	private int size;

	private boolean retired;

	/**
	 * Creates an empty log.
	 * @param limit the limit it enforces
	 */
	SlidingWindowLog(Limit limit) {
		this.limit = limit;
		this.period = limit.period().toNanos();
		this.log = new long[(int) Math.min(8, limit.limit())];
	}

	@Override
	public Limit limit() {
		return this.limit;
	}

	@Override
	public synchronized @Nullable Decision tryAcquire(long nowNanos, long cost, long maxWaitNanos) {
		if (this.retired) {
			return null;
		}
		expire(nowNanos);
		long max = this.limit.limit();
		if (this.size + cost > max) {
			long oldestToLeave = at((int) Math.min(this.size - 1, this.size + cost - max - 1));
			return Decision.rejected(max, Math.max(0, max - this.size), newest() + this.period - nowNanos, untilOldestLeaves(nowNanos),
					oldestToLeave + this.period - nowNanos);
		}
		long timestamp = (this.size > 0) ? Math.max(nowNanos, newest()) : nowNanos;
		ensureCapacity((int) (this.size + cost));
		for (long i = 0; i < cost; i++) {
			this.log[(this.head + this.size) % this.log.length] = timestamp;
			this.size++;
		}
		return Decision.allowed(max, max - this.size, timestamp + this.period - nowNanos, untilOldestLeaves(nowNanos));
	}

	@Override
	public synchronized @Nullable Decision check(long nowNanos, long cost) {
		if (this.retired) {
			return null;
		}
		expire(nowNanos);
		long max = this.limit.limit();
		if (this.size + cost > max) {
			long oldestToLeave = at((int) Math.min(this.size - 1, this.size + cost - max - 1));
			return Decision.rejected(max, Math.max(0, max - this.size), newest() + this.period - nowNanos,
					untilOldestLeaves(nowNanos), oldestToLeave + this.period - nowNanos);
		}
		return peek(nowNanos);
	}

	@Override
	public synchronized @Nullable Decision release(long nowNanos, long cost) {
		if (this.retired) {
			return null;
		}
		this.size -= (int) Math.min(cost, this.size);
		return peek(nowNanos);
	}

	@Override
	public long mark(long nowNanos, Decision admitted) {
		return nowNanos + admitted.resetNanos() - this.period;
	}

	/**
	 * Removes the acquisition's own entries (the mark is their time), those still in the window; entries
	 * of the same time are alike, so which of them go does not matter.
	 */
	@Override
	public synchronized @Nullable Decision giveBack(long nowNanos, long cost, long mark, Limit admittedUnder) {
		if (this.retired) {
			return null;
		}
		expire(nowNanos);
		long left = cost;
		int kept = 0;
		for (int i = 0; i < this.size; i++) {
			long entry = at(i);
			if (entry == mark && left > 0) {
				left--;
				continue;
			}
			// Compacted in place: the entries kept move towards the head, never past one not yet read.
			this.log[(this.head + kept) % this.log.length] = entry;
			kept++;
		}
		this.size = kept;
		return peek(nowNanos);
	}

	@Override
	public synchronized @Nullable Decision peek(long nowNanos) {
		if (this.retired) {
			return null;
		}
		expire(nowNanos);
		long reset = (this.size > 0) ? newest() + this.period - nowNanos : 0;
		return Decision.allowed(this.limit.limit(), Math.max(0, this.limit.limit() - this.size), reset,
				untilOldestLeaves(nowNanos));
	}

	@Override
	public synchronized @Nullable LimiterState moveTo(Limit limit, long nowNanos) {
		LimiterState.requireSameAlgorithm(this.limit, limit);
		if (this.retired) {
			return null;
		}
		this.retired = true;
		SlidingWindowLog next = new SlidingWindowLog(limit);
		next.log = new long[Math.max(this.size, next.log.length)];
		for (int i = 0; i < this.size; i++) {
			next.log[i] = at(i);
		}
		next.size = this.size;
		next.expire(nowNanos);
		return next;
	}

	/** Additional quota comes when the oldest entry in the window ages out; zero for an empty log. */
	private long untilOldestLeaves(long nowNanos) {
		return (this.size > 0) ? at(0) + this.period - nowNanos : 0;
	}

	private void expire(long nowNanos) {
		while (this.size > 0 && this.log[this.head] <= nowNanos - this.period) {
			this.head = (this.head + 1) % this.log.length;
			this.size--;
		}
	}

	private long at(int index) {
		return this.log[(this.head + index) % this.log.length];
	}

	private long newest() {
		return at(this.size - 1);
	}

	private void ensureCapacity(int needed) {
		if (needed <= this.log.length) {
			return;
		}
		int capacity = (int) Math.min(this.limit.limit(), Math.max(needed, this.log.length * 2L));
		long[] grown = new long[capacity];
		for (int i = 0; i < this.size; i++) {
			grown[i] = at(i);
		}
		this.log = grown;
		this.head = 0;
	}

	@Override
	public synchronized String toString() {
		long[] entries = new long[this.size];
		for (int i = 0; i < this.size; i++) {
			entries[i] = at(i);
		}
		return "SlidingWindowLog" + Arrays.toString(entries);
	}
}
