package io.github.ratelimit.redis.it;

import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.context.ConfigurableApplicationContext;

import io.github.ratelimit.redis.TestRedis;
import io.github.ratelimit.testsupport.Http;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code count: failures} on a real Redis, counting the calls the server sees ({@code INFO
 * commandstats}): one read-only script call up front, and one more only when the response counts.
 */
class CountFailuresTests {

	private static TestRedis redis;

	@BeforeAll
	static void startRedis() {
		redis = TestRedis.start();
	}

	@AfterAll
	static void stopRedis() {
		redis.close();
	}

	@Test
	void aSuccessCostsOneReadOnlyCallAndAFailureOneMore() {
		try (ConfigurableApplicationContext app = RedisTestApplication.start("spring.data.redis.port=" + redis.port(),
				"rate-limit.store.redis.timeout=2s", "rate-limit.policies.login.limit=3",
				"rate-limit.policies.login.period=1h", "rate-limit.policies.login.key=global",
				"rate-limit.policies.login.count=failures", "rate-limit.rules[2].path=/login",
				"rate-limit.rules[2].policies=login")) {
			int port = RedisTestApplication.port(app);
			// Loads both scripts (EVALSHA, then EVAL after NOSCRIPT), so what follows is steady state.
			assertThat(new Http(port).get("/login?ok=false").statusCode()).isEqualTo(401);

			redis.resetStats();
			assertThat(new Http(port).get("/login?ok=true").statusCode()).isEqualTo(200);
			Map<String, Long> success = redis.commandCalls();
			assertThat(scriptCalls(success)).as("a success: the check only").isEqualTo(1);
			assertThat(success).as("and nothing written: %s", success).doesNotContainKeys("set", "del", "pexpire");

			redis.resetStats();
			assertThat(new Http(port).get("/login?ok=false").statusCode()).isEqualTo(401);
			assertThat(scriptCalls(redis.commandCalls())).as("a failure: the check, then the count").isEqualTo(2);

			assertThat(new Http(port).get("/login?ok=false").statusCode()).isEqualTo(401);
			assertThat(new Http(port).get("/login?ok=true").statusCode()).as("three failures lock out").isEqualTo(429);
		}
	}

	private static long scriptCalls(Map<String, Long> calls) {
		return calls.getOrDefault("evalsha", 0L) + calls.getOrDefault("eval", 0L);
	}
}
