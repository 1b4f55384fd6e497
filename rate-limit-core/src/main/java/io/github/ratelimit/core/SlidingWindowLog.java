package io.github.ratelimit.core;

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
final class SlidingWindowLog extends LockedState {

	private final long period;

	private long[] log;

	private int head;

	private int size;

	/**
	 * Creates an empty log.
	 * @param limit the limit it enforces
	 */
	SlidingWindowLog(Limit limit) {
		super(limit);
		this.period = limit.period().toNanos();
		this.log = new long[(int) Math.min(8, limit.limit())];
	}

	@Override
	Decision decideLocked(long nowNanos, long cost, boolean take) {
		expire(nowNanos);
		long max = this.limit.limit();
		if (this.size + cost > max) {
			long oldestToLeave = at((int) Math.min(this.size - 1, this.size + cost - max - 1));
			return Decision.rejected(max, Math.max(0, max - this.size), newest() + this.period - nowNanos,
					untilOldestLeaves(nowNanos), oldestToLeave + this.period - nowNanos);
		}
		if (!take) {
			return peekLocked(nowNanos);
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
	Decision releaseLocked(long nowNanos, long cost) {
		this.size -= (int) Math.min(cost, this.size);
		return peekLocked(nowNanos);
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
	Decision giveBackLocked(long nowNanos, long cost, long mark, Limit admittedUnder) {
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
		return peekLocked(nowNanos);
	}

	@Override
	Decision peekLocked(long nowNanos) {
		expire(nowNanos);
		long reset = (this.size > 0) ? newest() + this.period - nowNanos : 0;
		return Decision.allowed(this.limit.limit(), Math.max(0, this.limit.limit() - this.size), reset,
				untilOldestLeaves(nowNanos));
	}

	@Override
	LimiterState successor(Limit limit, long nowNanos) {
		SlidingWindowLog next = new SlidingWindowLog(limit);
		next.log = entries(Math.max(this.size, next.log.length));
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
		this.log = entries(capacity);
		this.head = 0;
	}

	@Override
	public synchronized String toString() {
		return "SlidingWindowLog" + Arrays.toString(entries(this.size));
	}

	/** The entries from the oldest, in a new array of {@code length} (at least the size). */
	private long[] entries(int length) {
		long[] entries = new long[length];
		for (int i = 0; i < this.size; i++) {
			entries[i] = at(i);
		}
		return entries;
	}
}
