package io.github.ratelimit.redis.it;

import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.context.ConfigurableApplicationContext;

import io.github.ratelimit.redis.TestRedis;
import io.github.ratelimit.testsupport.Http;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code count: failures} on a real Redis, counting the calls the server sees ({@code INFO commandstats})
 * per attempt: a failure costs the one script call that admits it; a success that one and the give-back
 * (sent asynchronously, after the response). For a login endpoint, and for an HTTP Basic rule
 * ({@code path: /**}) on which most requests succeed.
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
	void aFailureCostsOneScriptCallAndASuccessTwo() throws InterruptedException {
		try (ConfigurableApplicationContext app = RedisTestApplication.start("spring.data.redis.port=" + redis.port(),
				"rate-limit.store.redis.timeout=2s", "rate-limit.policies.login.limit=3",
				"rate-limit.policies.login.period=1h", "rate-limit.policies.login.key=global",
				"rate-limit.policies.login.count=failures", "rate-limit.rules[2].path=/login",
				"rate-limit.rules[2].policies=login")) {
			Http http = new Http(RedisTestApplication.port(app));
			// The store's own warm-up at start-up and earlier tests are not counted.
			redis.resetStats();
			// Loads the scripts (EVALSHA, then EVAL after NOSCRIPT), so what follows is steady state.
			assertThat(http.get("/login?ok=false").statusCode()).isEqualTo(401);
			assertThat(http.get("/login?ok=true").statusCode()).isEqualTo(200);
			// The failure's admission, the success's admission and its give-back (asynchronous): none may land later.
			awaitScriptCalls(3);

			redis.resetStats();
			assertThat(http.get("/login?ok=false").statusCode()).isEqualTo(401);
			Map<String, Long> failure = redis.commandCalls();
			assertThat(scriptCalls(failure)).as("a failure: the admission only, %s", failure).isEqualTo(1);

			redis.resetStats();
			assertThat(http.get("/login?ok=true").statusCode()).isEqualTo(200);
			Map<String, Long> success = awaitScriptCalls(2);
			assertThat(scriptCalls(success)).as("a success: the admission and the give-back, %s", success).isEqualTo(2);

			assertThat(http.get("/login?ok=true").statusCode()).as("successes spend nothing").isEqualTo(200);
			assertThat(http.get("/login?ok=true").statusCode()).isEqualTo(200);
			assertThat(http.get("/login?ok=false").statusCode()).as("the third failure").isEqualTo(401);
			assertThat(http.get("/login?ok=true").statusCode()).as("three failures lock out").isEqualTo(429);
		}
	}

	@Test
	void onAnHttpBasicRuleASuccessCostsTwoScriptCallsAndAFailureOne() throws InterruptedException {
		try (ConfigurableApplicationContext app = RedisTestApplication.start("spring.data.redis.port=" + redis.port(),
				"rate-limit.store.redis.timeout=2s", "rate-limit.policies.basic.limit=5",
				"rate-limit.policies.basic.period=1h", "rate-limit.policies.basic.key=ip",
				"rate-limit.policies.basic.count=failures", "rate-limit.rules[0].path=/**",
				"rate-limit.rules[0].policies=basic")) {
			Http http = new Http(RedisTestApplication.port(app));
			// The store's own warm-up at start-up and earlier tests are not counted.
			redis.resetStats();
			assertThat(http.get("/login?ok=false").statusCode()).isEqualTo(401);
			assertThat(http.get("/free").statusCode()).isEqualTo(200);
			// The failure's admission, the success's admission and its give-back (asynchronous): none may land later.
			awaitScriptCalls(3);

			redis.resetStats();
			for (int i = 0; i < 10; i++) {
				assertThat(http.get("/free").statusCode()).isEqualTo(200);
			}
			Map<String, Long> successes = awaitScriptCalls(20);
			assertThat(scriptCalls(successes)).as("10 successes, %s", successes).isEqualTo(20);

			redis.resetStats();
			assertThat(http.get("/login?ok=false").statusCode()).isEqualTo(401);
			assertThat(scriptCalls(redis.commandCalls())).as("a failure").isEqualTo(1);
		}
	}

	/** Waits (at most 5 s) until Redis has run {@code expected} script calls since the last reset; a give-back is asynchronous. */
	private static Map<String, Long> awaitScriptCalls(long expected) throws InterruptedException {
		long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
		Map<String, Long> calls = redis.commandCalls();
		while (scriptCalls(calls) < expected && System.nanoTime() < deadline) {
			Thread.sleep(10);
			calls = redis.commandCalls();
		}
		// Nothing more comes afterwards.
		Thread.sleep(100);
		return redis.commandCalls();
	}

	private static long scriptCalls(Map<String, Long> calls) {
		return calls.getOrDefault("evalsha", 0L) + calls.getOrDefault("eval", 0L);
	}
}
