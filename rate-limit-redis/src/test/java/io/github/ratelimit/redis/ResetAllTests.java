package io.github.ratelimit.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.data.redis.connection.RedisClusterConnection;
import org.springframework.data.redis.connection.RedisClusterNode;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.Limit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link RedisRateLimitStore#resetAll()} on a real Redis and a real three-master cluster: every key of
 * the store's prefix goes (found by SCAN, more than one batch of them), keys of another prefix (one a
 * glob would match) and of nobody stay, and each budget is whole again, rejections kept in process
 * included.
 */
class ResetAllTests {

	@RegisterExtension
	static final RedisExtension redis = new RedisExtension();

	private static final Limit ONE_PER_HOUR = Limit.builder().limit(1).period(Duration.ofHours(1)).build();

	@Test
	void deletesEveryKeyOfItsPrefixAndNoOther() {
		redis.commands().flushall();
		try (RedisRateLimitStore store = RedisRateLimitStore.builder(redis.connectionFactory())
			.keyPrefix("t*:")
			.timeout(Duration.ofSeconds(2))
			.build();
				RedisRateLimitStore neighbour = RedisRateLimitStore.builder(redis.connectionFactory())
					.keyPrefix("tx:")
					.timeout(Duration.ofSeconds(2))
					.build()) {
			for (int i = 0; i < 1200; i++) {
				assertThat(store.tryAcquire(acquisition("ip:10.0." + (i / 256) + "." + (i % 256))).isAllowed()).isTrue();
			}
			Acquisition alice = acquisition("user:alice");
			store.tryAcquire(alice);
			assertThat(store.tryAcquire(alice).isAllowed()).isFalse();
			assertThat(store.tryAcquire(alice).isAllowed()).as("answered from the rejections kept").isFalse();
			long cached = store.decider.cachedRejections.sum();
			assertThat(cached).isPositive();
			neighbour.tryAcquire(alice);
			redis.commands().set("t*:unrelated", "kept");
			redis.commands().set("someone-else", "kept");

			store.resetAll();

			assertThat(redis.commands().keys("t\\*:{*")).isEmpty();
			assertThat(redis.commands().keys("*")).containsExactlyInAnyOrder("tx:{login:user:alice}", "t*:unrelated",
					"someone-else");
			assertThat(store.tryAcquire(alice).isAllowed()).as("whole again").isTrue();
			assertThat(store.decider.cachedRejections.sum()).isEqualTo(cached);
			assertThat(neighbour.tryAcquire(alice).isAllowed()).as("the other prefix is untouched").isFalse();
		}
	}

	@Test
	void runtimeChangesOfPoliciesStayAndHaveNoTtl() {
		redis.commands().flushall();
		try (RedisRateLimitStore store = RedisRateLimitStore.builder(redis.connectionFactory())
			.timeout(Duration.ofSeconds(2))
			.build()) {
			store.storeOverride("login", "{\"limit\":4}");
			store.tryAcquire(acquisition("user:alice"));
			assertThat(redis.commands().pttl(store.overrides.hashKey())).as("no TTL: it holds what operators set").isEqualTo(-1);
			assertThat(redis.commands().pttl(store.overrides.hashKey() + ":version")).isEqualTo(-1);

			store.resetAll();

			assertThat(redis.commands().keys("*")).containsExactlyInAnyOrder("rate-limit:{overrides}",
					"rate-limit:{overrides}:version");
			assertThat(redis.commands().hgetall(store.overrides.hashKey())).containsExactly(Map.entry("login", "{\"limit\":4}"));
		}
	}

	@Test
	void onAClusterDeletesTheKeysOfEveryMaster() {
		TestRedisCluster cluster = TestRedisCluster.shared();
		LettuceConnectionFactory factory = cluster.connectionFactory();
		try (RedisRateLimitStore store = RedisRateLimitStore.builder(factory).timeout(Duration.ofSeconds(2)).build()) {
			Set<Integer> masters = new HashSet<>();
			for (int i = 0; i < 300; i++) {
				Acquisition acquisition = acquisition("user:" + i);
				assertThat(store.tryAcquire(acquisition).isAllowed()).isTrue();
				masters.add(cluster.portOf(store.redisKey("login", "user:" + i)));
			}
			assertThat(masters).as("keys on every master").hasSize(3);
			assertThat(keys(factory)).isEqualTo(300);

			store.resetAll();

			assertThat(keys(factory)).isZero();
			for (int i = 0; i < 300; i++) {
				assertThat(store.tryAcquire(acquisition("user:" + i)).isAllowed()).isTrue();
			}
		}
		finally {
			factory.destroy();
		}
	}

	private static long keys(LettuceConnectionFactory factory) {
		long keys = 0;
		try (RedisClusterConnection connection = factory.getClusterConnection()) {
			for (RedisClusterNode node : connection.clusterGetNodes()) {
				if (node.isMaster()) {
					keys += connection.keys(node, "*".getBytes(StandardCharsets.UTF_8)).size();
				}
			}
		}
		return keys;
	}

	private static Acquisition acquisition(String key) {
		return new Acquisition("login", ONE_PER_HOUR, key, 1);
	}
}
