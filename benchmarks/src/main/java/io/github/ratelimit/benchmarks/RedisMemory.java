package io.github.ratelimit.benchmarks;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;

import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.redis.lettuce.Bucket4jLettuce;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.ByteArrayCodec;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.Limit;
import io.github.ratelimit.redis.RedisRateLimitStore;

import io.github.ratelimit.benchmarks.harness.Measurement;
import io.github.ratelimit.benchmarks.harness.SectionResult;
import io.github.ratelimit.testsupport.RedisProcess;

/**
 * Redis' {@code MEMORY USAGE} of one key per algorithm of ours (100 requests per minute, an IPv4
 * client key, the default prefix) after one request, and of Bucket4j's Lettuce state for the same token
 * bucket under the same key name, on a {@code redis-server} of its own.
 */
public final class RedisMemory {

	public static final String FIGURE_PREFIX = "Redis, ";

	static final String CLIENT = "ip:203.0.113.195";

	private RedisMemory() {
	}

	public static String figure(String algorithm) {
		return FIGURE_PREFIX + algorithm;
	}

	/**
	 * Measures and adds the figures (one per algorithm; ours, and Bucket4j on the token bucket).
	 * @param section where the figures go
	 * @throws Exception when Redis cannot be started or asked
	 */
	public static void measure(SectionResult section) throws Exception {
		try (RedisProcess redis = RedisProcess.launch()) {
			RedisClient client = RedisClient.create("redis://127.0.0.1:" + redis.port());
			LettuceConnectionFactory factory = new LettuceConnectionFactory(
					new RedisStandaloneConfiguration("127.0.0.1", redis.port()));
			factory.afterPropertiesSet();
			factory.start();
			try (StatefulRedisConnection<byte[], byte[]> connection = client.connect(ByteArrayCodec.INSTANCE)) {
				RedisCommands<byte[], byte[]> commands = connection.sync();
				String tokenBucketKey = null;
				long logAfterAll = -1;
				try (RedisRateLimitStore store = RedisRateLimitStore.builder(factory).timeout(Duration.ofSeconds(5)).build()) {
					for (Algorithm algorithm : Algorithm.values()) {
						if (!algorithm.isRate()) {
							// Requests in flight hold leases, not a per-key state of a rate.
							continue;
						}
						Limit limit = Limit.builder().algorithm(algorithm).limit(100).period(Duration.ofMinutes(1)).build();
						Acquisition one = new Acquisition(algorithm.id(), limit, CLIENT, 1);
						store.tryAcquire(one);
						byte[] key = store.redisKey(algorithm.id(), CLIENT).getBytes(StandardCharsets.UTF_8);
						section.add(new Measurement(figure(algorithm.id()), "ours", commands.memoryUsage(key), "B"));
						if (algorithm == Algorithm.TOKEN_BUCKET) {
							tokenBucketKey = store.redisKey(algorithm.id(), CLIENT);
						}
						if (algorithm == Algorithm.SLIDING_WINDOW_LOG) {
							for (int i = 1; i < 100; i++) {
								store.tryAcquire(one);
							}
							logAfterAll = commands.memoryUsage(key);
						}
					}
				}
				commands.flushall();
				BucketConfiguration configuration = BucketConfiguration.builder()
					.addLimit(Bandwidth.builder().capacity(100).refillGreedy(100, Duration.ofMinutes(1)).build())
					.build();
				byte[] key = tokenBucketKey.getBytes(StandardCharsets.UTF_8);
				Bucket4jLettuce.casBasedBuilder(connection)
					.expirationAfterWrite(ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(Duration.ZERO))
					.build()
					.builder()
					.build(key, () -> configuration)
					.tryConsume(1);
				String figure = figure(Algorithm.TOKEN_BUCKET.id());
				section.add(new Measurement(figure, "Bucket4j", commands.memoryUsage(key), "B"));
				section.compare(figure, "ours", "Bucket4j", null);
				section.note(String.format(Locale.ROOT, "Redis MEMORY USAGE (redis-server %s): one key after one request, "
						+ "limit 100 per minute, key %s (%d chars; Bucket4j's state stored under the same name); "
						+ "the sliding window log grows with the requests in its window: %d B after 100.",
						RedisProcess.version(), tokenBucketKey, tokenBucketKey.length(), logAfterAll));
			}
			finally {
				factory.destroy();
				client.shutdown();
			}
		}
	}
}
