package io.github.ratelimit.redis.it;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.context.ConfigurableApplicationContext;

import io.github.ratelimit.redis.TestRedis;
import io.github.ratelimit.redis.TestRedisCluster;
import io.github.ratelimit.testsupport.AtOnce;
import io.github.ratelimit.testsupport.Http;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A lockout of 4 failed attempts per user, enforced by two application instances on one Redis (standalone,
 * and a three-master Cluster): 48 wrong passwords sent at once, half to each instance, get exactly 4
 * answers and 44 429s; attempts in flight hold their part of the budget on every instance.
 */
class ParallelGuessesOnRedisTests {

	private static final int PARALLEL = 48;

	private static TestRedis redis;

	private static TestRedisCluster cluster;

	@BeforeAll
	static void startRedis() {
		redis = TestRedis.start();
		cluster = TestRedisCluster.shared();
	}

	@AfterAll
	static void stopRedis() {
		redis.close();
	}

	@Test
	void parallelWrongGuessesOnTwoInstancesGetExactlyTheBudget() throws Exception {
		parallelGuesses("failures", "false", 401, "spring.data.redis.port=" + redis.port());
	}

	@Test
	void parallelSuccessesUnderCountSuccessesOnTwoInstancesGetExactlyTheBudget() throws Exception {
		parallelGuesses("successes", "true", 200, "spring.data.redis.port=" + redis.port());
	}

	@Test
	void parallelWrongGuessesOnTwoInstancesOfAClusterGetExactlyTheBudget() throws Exception {
		parallelGuesses("failures", "false", 401, "spring.data.redis.cluster.nodes=" + cluster.nodes());
	}

	static void parallelGuesses(String count, String ok, int answered, String redisProperty) throws Exception {
		String[] properties = { redisProperty, "rate-limit.store.redis.timeout=2s",
				// A call that timed out under load must not let a guess through: this counts the lockout only.
				"rate-limit.store.redis.on-failure=deny", "rate-limit.policies.lockout.limit=4",
				"rate-limit.policies.lockout.period=1h", "rate-limit.policies.lockout.key=param:user",
				"rate-limit.policies.lockout.count=" + count, "rate-limit.rules[4].path=/guess",
				"rate-limit.rules[4].policies=lockout", "server.tomcat.threads.max=64" };
		String user = "mallory-" + count + "-" + System.nanoTime();
		try (ConfigurableApplicationContext first = RedisTestApplication.start(properties);
				ConfigurableApplicationContext second = RedisTestApplication.start(properties)) {
			List<Http> instances = List.of(new Http(RedisTestApplication.port(first)),
					new Http(RedisTestApplication.port(second)));
			// Loads the scripts on both instances, on another user.
			for (Http http : instances) {
				assertThat(http.post("/guess", "user=warm-up&ok=" + ok).statusCode()).isEqualTo(answered);
			}
			Map<Integer, Integer> statuses = AtOnce.statuses(PARALLEL, (i) -> () -> instances.get(i % 2)
				.post("/guess", "user=" + user + "&ok=" + ok + "&ms=300")
				.statusCode());
			assertThat(statuses).containsExactlyInAnyOrderEntriesOf(Map.of(answered, 4, 429, PARALLEL - 4));
			for (Http http : instances) {
				assertThat(http.post("/guess", "user=" + user + "&ok=" + ok).statusCode()).isEqualTo(429);
			}
		}
	}

}
