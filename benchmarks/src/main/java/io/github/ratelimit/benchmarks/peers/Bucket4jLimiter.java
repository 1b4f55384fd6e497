package io.github.ratelimit.benchmarks.peers;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.Bucket;
import io.github.bucket4j.ConsumptionProbe;

/**
 * Bucket4j as a Spring Boot application uses it in process: one local bucket per key in a Caffeine
 * cache (bounded, forgetting idle keys), asked with {@code tryConsumeAndReturnRemaining} because the
 * response headers need the remaining tokens and the wait. Bucket4j's defaults otherwise: a lock-free
 * bucket (compare-and-set on an immutable state copy) on the millisecond clock. Thread-safe.
 */
public final class Bucket4jLimiter {

	private final Cache<String, Bucket> buckets;

	private final Bandwidth bandwidth;

	/**
	 * Creates the limiter.
	 * @param policy the budget of every key
	 * @param maximumSize the cache's bound on tracked keys
	 */
	public Bucket4jLimiter(Policy policy, long maximumSize) {
		this.bandwidth = policy.bandwidth();
		this.buckets = Caffeine.newBuilder().maximumSize(maximumSize).expireAfterAccess(policy.idleExpiry()).build();
	}

	/**
	 * Decides one request of cost 1.
	 * @param key whose bucket
	 * @return Bucket4j's answer
	 */
	public ConsumptionProbe tryAcquire(String key) {
		Bucket bucket = this.buckets.getIfPresent(key);
		if (bucket == null) {
			bucket = this.buckets.get(key, (k) -> Bucket.builder().addLimit(this.bandwidth).build());
		}
		return bucket.tryConsumeAndReturnRemaining(1);
	}

	/**
	 * Returns how many keys the cache holds.
	 * @return Caffeine's estimate
	 */
	public long size() {
		return this.buckets.estimatedSize();
	}
}
