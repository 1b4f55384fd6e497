package io.github.ratelimit.benchmarks.peers;

import java.time.Duration;
import java.util.List;

import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.ConsumptionProbe;
import io.github.bucket4j.distributed.BucketProxy;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.redis.lettuce.Bucket4jLettuce;
import io.github.bucket4j.redis.lettuce.cas.LettuceBasedProxyManager;
import io.lettuce.core.api.StatefulRedisConnection;

/**
 * Bucket4j on Redis: its Lettuce compare-and-swap proxy manager (bucket4j_jdk17-lettuce), one prebuilt
 * {@link BucketProxy} per key, a greedy bucket of {@code limit} per {@code period}, keys expiring once
 * refilled (as ours do). Thread-safe, on a connection the caller owns.
 */
public final class Bucket4jRedisLimiter {

	private final BucketProxy[] buckets;

	/**
	 * Builds a bucket proxy per key.
	 * @param connection the shared Lettuce connection
	 * @param keys the Redis keys, in index order
	 * @param limit the bucket's capacity and refill per period
	 * @param period the refill period
	 */
	public Bucket4jRedisLimiter(StatefulRedisConnection<byte[], byte[]> connection, List<byte[]> keys, long limit,
			Duration period) {
		LettuceBasedProxyManager<byte[]> proxyManager = Bucket4jLettuce.casBasedBuilder(connection)
			.expirationAfterWrite(ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(Duration.ZERO))
			.build();
		BucketConfiguration configuration = BucketConfiguration.builder()
			.addLimit(Bandwidth.builder().capacity(limit).refillGreedy(limit, period).build())
			.build();
		this.buckets = new BucketProxy[keys.size()];
		for (int i = 0; i < keys.size(); i++) {
			this.buckets[i] = proxyManager.builder().build(keys.get(i), () -> configuration);
		}
	}

	/**
	 * Decides one request of cost 1.
	 * @param index the key's index
	 * @return Bucket4j's answer
	 */
	public ConsumptionProbe tryAcquire(int index) {
		return this.buckets[index].tryConsumeAndReturnRemaining(1);
	}
}
