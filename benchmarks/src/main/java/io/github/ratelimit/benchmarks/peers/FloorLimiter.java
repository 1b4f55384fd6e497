package io.github.ratelimit.benchmarks.peers;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;

import io.github.ratelimit.core.RateLimitClock;

/**
 * The lower bound of any in-process limiter on a cache: one Caffeine lookup and one compare-and-set on
 * a {@code long}, with no decision, no retry and nothing returned but the flag. Thread-safe; limits
 * nothing.
 * <p>
 * The plain floor's cache is only size-bounded: no expiry, no clock, and (while it is less than half
 * full) no bookkeeping of reads at all. The expiring floor's cache is configured like our store's:
 * variable expiry on the same clock, so every read is recorded for the expiry and eviction policies.
 */
public final class FloorLimiter {

	private final Cache<String, AtomicLong> counters;

	/**
	 * Creates the plain floor.
	 * @param maximumSize the cache's bound on tracked keys
	 */
	public FloorLimiter(long maximumSize) {
		this.counters = Caffeine.newBuilder().maximumSize(maximumSize).build();
	}

	/**
	 * Creates the floor on a cache configured as our store's.
	 * @param maximumSize the cache's bound on tracked keys
	 * @param idleExpiry how long an untouched key stays
	 */
	public FloorLimiter(long maximumSize, Duration idleExpiry) {
		long idleNanos = idleExpiry.toNanos();
		this.counters = Caffeine.newBuilder()
			.maximumSize(maximumSize)
			.ticker(RateLimitClock.SYSTEM::nanos)
			.expireAfter(new Expiry<String, AtomicLong>() {
				@Override
				public long expireAfterCreate(String key, AtomicLong value, long currentTime) {
					return idleNanos;
				}

				@Override
				public long expireAfterUpdate(String key, AtomicLong value, long currentTime, long currentDuration) {
					return Math.max(currentDuration, idleNanos);
				}

				@Override
				public long expireAfterRead(String key, AtomicLong value, long currentTime, long currentDuration) {
					return Math.max(currentDuration, idleNanos);
				}
			})
			.build();
	}

	/**
	 * Looks the key up and counts once.
	 * @param key the key
	 * @return whether the compare-and-set won
	 */
	public boolean tryAcquire(String key) {
		AtomicLong counter = this.counters.getIfPresent(key);
		if (counter == null) {
			counter = this.counters.get(key, (k) -> new AtomicLong());
		}
		long value = counter.get();
		return counter.compareAndSet(value, value + 1);
	}

	/**
	 * Returns how many keys the cache holds.
	 * @return Caffeine's estimate
	 */
	public long size() {
		return this.counters.estimatedSize();
	}
}
