package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.Limit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Measures Redis' {@code MEMORY USAGE} of one key per algorithm (limit 100 per minute, key an IPv4
 * client, default prefix), after one request and after the whole limit was spent, and prints it: the
 * numbers docs/redis.md quotes. Asserts only loose bounds.
 */
class MemoryUsageTests {

	@RegisterExtension
	static final RedisExtension redis = new RedisExtension();

	@Test
	void memoryPerKey() {
		redis.commands().flushall();
		Map<String, String> report = new LinkedHashMap<>();
		Map<Algorithm, long[]> sizes = new LinkedHashMap<>();
		try (RedisRateLimitStore store = RedisRateLimitStore.builder(redis.connectionFactory())
			.timeout(Duration.ofSeconds(2))
			.build()) {
			for (Algorithm algorithm : Algorithm.values()) {
				Limit limit = limit(algorithm, 100, Duration.ofMinutes(1));
				Acquisition one = new Acquisition(algorithm.id(), limit, "ip:203.0.113.195", 1);
				store.tryAcquire(one);
				String key = store.redisKey(algorithm.id(), "ip:203.0.113.195");
				long afterOne = redis.commands().memoryUsage(key);
				for (int i = 1; i < 100; i++) {
					store.tryAcquire(one);
				}
				long afterAll = redis.commands().memoryUsage(key);
				report.put(algorithm.id(), afterOne + " B after 1 request, " + afterAll + " B after 100 (key "
						+ key.length() + " chars, " + redis.commands().type(key) + ")");
				sizes.put(algorithm, new long[] { afterOne, afterAll });
			}
		}
		System.out.println("MEMORY USAGE per key (Redis " + redis.commands().info("server").lines()
			.filter((line) -> line.startsWith("redis_version:"))
			.findFirst()
			.orElse("?") + "):");
		report.forEach((algorithm, usage) -> System.out.println("  " + algorithm + ": " + usage));
		sizes.forEach((algorithm, usage) -> {
			assertThat(usage[0]).as(algorithm.id()).isLessThan(300);
			// A log keeps a timestamp per request, a concurrency limit a lease per request in flight.
			assertThat(usage[1]).as(algorithm.id()).isLessThan(algorithm.isRate() && algorithm != Algorithm.SLIDING_WINDOW_LOG ? 300 : 4_000);
		});
	}

	/** A limit of any algorithm: a concurrency limit has no period. */
	private static Limit limit(Algorithm algorithm, long limit, Duration period) {
		Limit.Builder builder = Limit.builder().algorithm(algorithm).limit(limit);
		return (algorithm.isRate() ? builder.period(period) : builder).build();
	}
}
