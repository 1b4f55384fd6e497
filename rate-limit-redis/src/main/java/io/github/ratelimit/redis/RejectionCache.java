package io.github.ratelimit.redis;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.Decision;
import io.github.ratelimit.core.Limit;

/**
 * Rejections Redis answered, kept in process until their Retry-After, so that a flood on a rejected
 * key costs Redis one call per key per Retry-After (at most per {@code maxAge}) instead of one per
 * request. Only rate algorithms' single acquisitions without a wait are kept: for those, a request of
 * the same limit and at least the rejected cost is rejected until the tokens the rejection waited for
 * are back, unless tokens come back earlier (a release, a reset, a changed limit). A release or reset
 * through this store, or a request under another limit (a raised limit, a plan change), drops the
 * entry at once; a reset or a change of a policy on another instance drops every entry when the store
 * next polls the overrides counter ({@link #clear()}), and anything else made elsewhere is seen here
 * within {@code maxAge}, when the entry expires.
 * <p>
 * Times are the local {@link System#nanoTime()}: an entry holds until the call's send time plus the
 * Retry-After less a margin, which is never later than the instant Redis' answer holds until (the
 * script ran after the send). Bounded: past {@value #MAX_ENTRIES} entries, expired ones are dropped,
 * and when none has expired, nothing more is kept. That sweep reads every entry, so it runs at most once
 * per sixteenth of {@code maxAge} (a millisecond at least): a flood of distinct rejected keys that keeps
 * the cache full costs a sweep per interval, not one per rejection. Thread-safe.
 */
final class RejectionCache {

	static final int MAX_ENTRIES = 100_000;

	/** Kept back from every entry's end: differences between the local and the server's clock rates. */
	private static final long MARGIN_NANOS = 1_000_000;

	private record Entry(Limit limit, long cost, long remaining, long resetAtNanos, long nextAtNanos, long retryAtNanos,
			long untilNanos) {
	}

	private record Key(String limitId, String key) {
	}

	private final long maxAgeNanos;

	private final ConcurrentMap<Key, Entry> entries = new ConcurrentHashMap<>();

	/** The least time between two sweeps of a full cache. */
	private final long sweepIntervalNanos;

	/** When a full cache was last swept ({@link System#nanoTime()}). */
	private final AtomicLong lastSweep;

	private final LongAdder sweeps = new LongAdder();

	/**
	 * Creates a cache.
	 * @param maxAgeNanos the longest an entry is kept, whatever its Retry-After; 0 keeps nothing
	 */
	RejectionCache(long maxAgeNanos) {
		this.maxAgeNanos = maxAgeNanos;
		this.sweepIntervalNanos = Math.max(maxAgeNanos / 16, 1_000_000);
		// The first sweep is due at once; times are compared by difference.
		this.lastSweep = new AtomicLong(System.nanoTime() - this.sweepIntervalNanos);
	}

	/**
	 * Says whether an acquisition may be decided from the cache (and its rejection kept).
	 * @param acquisition an acquisition
	 * @return {@code true} for a rate limit without a wait
	 */
	boolean applies(Acquisition acquisition) {
		// Every algorithm but a concurrency limit (whose slots come back when requests end) is a rate.
		return this.maxAgeNanos > 0 && acquisition.maxWaitNanos() == 0 && !Leases.isConcurrency(acquisition);
	}

	/**
	 * Finds a rejection that still holds for this acquisition.
	 * @param acquisition an acquisition for which {@link #applies(Acquisition)}
	 * @param nowNanos {@link System#nanoTime()}
	 * @return the rejection, its times counted from now, or {@code null} when Redis must decide
	 */
	@Nullable Decision find(Acquisition acquisition, long nowNanos) {
		Key key = new Key(acquisition.limitId(), acquisition.key());
		Entry entry = this.entries.get(key);
		if (entry == null) {
			return null;
		}
		if (nowNanos - entry.untilNanos() >= 0 || !entry.limit().equals(acquisition.limit())) {
			this.entries.remove(key, entry);
			return null;
		}
		if (acquisition.cost() < entry.cost()) {
			return null;
		}
		return Decision.rejected(acquisition.limit().limit(), entry.remaining(),
				Math.max(0, entry.resetAtNanos() - nowNanos), Math.max(0, entry.nextAtNanos() - nowNanos),
				entry.retryAtNanos() - nowNanos);
	}

	/**
	 * Keeps a rejection Redis answered.
	 * @param acquisition the rejected acquisition, for which {@link #applies(Acquisition)}
	 * @param decision Redis' rejection
	 * @param sentNanos {@link System#nanoTime()} before the call was sent
	 */
	void put(Acquisition acquisition, Decision decision, long sentNanos) {
		long hold = Math.min(decision.retryAfterNanos() - MARGIN_NANOS, this.maxAgeNanos);
		if (hold <= 0) {
			return;
		}
		if (this.entries.size() >= MAX_ENTRIES) {
			long now = System.nanoTime();
			long last = this.lastSweep.get();
			if (now - last >= this.sweepIntervalNanos && this.lastSweep.compareAndSet(last, now)) {
				this.sweeps.increment();
				this.entries.values().removeIf((entry) -> now - entry.untilNanos() >= 0);
			}
			if (this.entries.size() >= MAX_ENTRIES) {
				return;
			}
		}
		this.entries.put(new Key(acquisition.limitId(), acquisition.key()), new Entry(acquisition.limit(),
				acquisition.cost(), decision.remaining(), sentNanos + decision.resetNanos(), sentNanos + decision.nextNanos(),
				sentNanos + decision.retryAfterNanos(), sentNanos + hold));
	}

	/**
	 * Drops what is kept for a key: tokens came back (a release, a reset).
	 * @param limitId the limit
	 * @param key the key
	 */
	void drop(String limitId, String key) {
		this.entries.remove(new Key(limitId, key));
	}

	/** Drops everything kept: every budget was reset, or tokens may have come back anywhere (a reset or a change
	 * on another instance). */
	void clear() {
		this.entries.clear();
	}

	int size() {
		return this.entries.size();
	}

	/** How many times a full cache was swept for expired entries. */
	long sweeps() {
		return this.sweeps.sum();
	}
}
