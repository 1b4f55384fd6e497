package io.github.ratelimit.core;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The bans of one limit in a {@link CaffeineRateLimitStore}, and the rejections that count towards them
 * ({@link Ban}). Bounded as the limit's rate table is ({@code maximumSize} keys), and it never evicts a key
 * it holds: an entry goes only once its ban is over and the window of its count has passed. A full table
 * counts no rejection of a key it does not hold (that key's budget still locks it out), so a flood of keys
 * can neither lift a ban nor make the table grow. Thread-safe: each key's entry is replaced atomically.
 */
final class BanTable {

	/** A full table looks for entries that are over at most once per second of the store's clock. */
	private static final long SWEEP_INTERVAL_NANOS = 1_000_000_000L;

	private final ConcurrentMap<String, Entry> entries = new ConcurrentHashMap<>();

	private final long maximumSize;

	private final AtomicLong lastSweep;

	BanTable(long maximumSize, long nowNanos) {
		this.maximumSize = maximumSize;
		this.lastSweep = new AtomicLong(nowNanos - SWEEP_INTERVAL_NANOS);
	}

	/**
	 * One key's count and ban: {@code strikes} rejections since {@code firstNanos}, banned until
	 * {@code untilNanos} (in the past when it is not).
	 */
	private record Entry(long firstNanos, long strikes, long untilNanos) {

		boolean isOver(long nowNanos, Ban ban) {
			return this.untilNanos - nowNanos <= 0 && nowNanos - this.firstNanos >= ban.withinNanos();
		}

	}

	/**
	 * Returns the rest of a key's ban.
	 * @return nanoseconds; 0 when the key is not banned
	 */
	long bannedNanos(String key, long nowNanos) {
		Entry entry = this.entries.get(key);
		return (entry != null && entry.untilNanos() - nowNanos > 0) ? entry.untilNanos() - nowNanos : 0;
	}

	/**
	 * Counts one rejection of the key by its budget: the {@code after}-th within {@code within} of the first
	 * bans the key (and its count starts again after the ban).
	 * @return whether this rejection started a ban
	 */
	boolean strike(String key, long nowNanos, Ban ban) {
		if (!this.entries.containsKey(key) && this.entries.size() >= this.maximumSize) {
			sweep(nowNanos, ban);
		}
		boolean[] started = new boolean[1];
		this.entries.compute(key, (k, entry) -> {
			if (entry == null && this.entries.size() >= this.maximumSize) {
				return null;
			}
			if (entry != null && entry.untilNanos() - nowNanos > 0) {
				// Banned already (a request that asked its budget before the ban started).
				return entry;
			}
			boolean fresh = entry == null || nowNanos - entry.firstNanos() >= ban.withinNanos();
			long strikes = (fresh ? 0 : entry.strikes()) + 1;
			if (strikes >= ban.after()) {
				started[0] = true;
				return new Entry(nowNanos, 0, nowNanos + ban.durationNanos());
			}
			return new Entry(fresh ? nowNanos : entry.firstNanos(), strikes, (entry != null) ? entry.untilNanos() : nowNanos);
		});
		return started[0];
	}

	/** Lifts a key's ban and forgets its count. */
	void reset(String key) {
		this.entries.remove(key);
	}

	long size() {
		return this.entries.size();
	}

	/** Removes the entries that are over, at most once per {@link #SWEEP_INTERVAL_NANOS}. */
	private void sweep(long nowNanos, Ban ban) {
		long last = this.lastSweep.get();
		if (nowNanos - last >= SWEEP_INTERVAL_NANOS && this.lastSweep.compareAndSet(last, nowNanos)) {
			this.entries.values().removeIf((entry) -> entry.isOver(nowNanos, ban));
		}
	}

}
