package io.github.ratelimit.redis.it;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.context.ConfigurableApplicationContext;

import io.github.ratelimit.redis.TestRedis;
import io.github.ratelimit.testsupport.Http;
import io.github.ratelimit.testsupport.RedisProcess;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runtime changes of a policy on the Redis store, seen from the user's side through two instances on
 * one Redis (standalone or cluster): a change made on one instance is enforced by the other within
 * the poll interval, outlives a restart, and a restore or a reset reaches every instance; cached
 * rejections never outlive a raised limit or a reset.
 */
final class SharedOverrides {

	/** Each instance looks for changes this often: the delay a change takes to reach every instance. */
	static final Duration POLL = Duration.ofMillis(100);

	/** The most a test waits for a change to arrive: far above the poll interval, on a loaded machine. */
	private static final Duration PATIENCE = Duration.ofSeconds(15);

	private SharedOverrides() {
	}

	static String[] properties(String... redisProperties) {
		// A long timeout: a request on-failure decides (a slow first call on a busy machine) is not counted in
		// Redis, and these tests count exactly. Rejections are kept an hour: only a dropped entry lets a raised
		// limit or a reset through.
		// The caller's properties last, so that they win over these defaults.
		return Stream.concat(Stream.of("rate-limit.store.redis.timeout=5s",
				"rate-limit.store.redis.overrides-poll-interval=" + POLL.toMillis() + "ms",
				"rate-limit.store.redis.rejection-cache=1h", "management.endpoints.web.exposure.include=ratelimits"),
				Stream.of(redisProperties))
			.toArray(String[]::new);
	}

	/**
	 * A client spends 2 of 2 on A; B raises the limit to 4; A (whose cache holds the client's rejection)
	 * lets exactly 2 more through, from either instance; a restarted instance finds the override and warns;
	 * a restore on one instance brings the other back to the configured values; bad changes are refused.
	 */
	static void aChangeOnOneInstanceReachesTheOther(CapturedOutput output, String... redisProperties) {
		String[] properties = properties(redisProperties);
		ConfigurableApplicationContext b = null;
		try (ConfigurableApplicationContext a = RedisTestApplication.start(properties)) {
			b = RedisTestApplication.start(properties);
			Http onA = new Http(RedisTestApplication.port(a));
			Http onB = new Http(RedisTestApplication.port(b));
			assertThat(tunable(onA, "spender").statusCode()).isEqualTo(200);
			assertThat(tunable(onB, "spender").statusCode()).isEqualTo(200);
			assertThat(tunable(onA, "spender").statusCode()).isEqualTo(429);
			assertThat(tunable(onB, "spender").statusCode()).as("both instances keep the rejection").isEqualTo(429);

			HttpResponse<String> changed = onB.postJson("/actuator/ratelimits/tunable", "{\"limit\": 4}");
			assertThat(changed.statusCode()).isEqualTo(200);
			assertThat(changed.body()).contains("\"limit\":4").contains("\"overridden\":true");
			awaitLimit(onA, 4);
			HttpResponse<String> more = tunable(onA, "spender");
			assertThat(more.statusCode()).as("a raised limit is not answered from the cache").isEqualTo(200);
			assertThat(more.headers().firstValue("RateLimit-Policy")).hasValue("\"tunable\";q=4;w=3600");
			assertThat(tunable(onB, "spender").statusCode()).isEqualTo(200);
			assertThat(tunable(onA, "spender").statusCode()).as("exactly two more").isEqualTo(429);
			assertThat(tunable(onB, "spender").statusCode()).as("exactly two more").isEqualTo(429);
			assertThat(count(output, "Rate limit policy 'tunable' changed at run time from token-bucket(limit=2, "
					+ "period=PT1H, burst=2) to token-bucket(limit=4, period=PT1H, burst=4)"))
				.as("logged once, by B").isEqualTo(1);
			assertThat(count(output, "Rate limit policy 'tunable' changed on another instance from token-bucket("
					+ "limit=2, period=PT1H, burst=2) to token-bucket(limit=4, period=PT1H, burst=4)"))
				.as("logged once, by A").isEqualTo(1);

			// Bad changes: 400 naming the field, 404 for an unknown policy; nothing stored.
			HttpResponse<String> zero = onB.postJson("/actuator/ratelimits/tunable", "{\"limit\": 0}");
			assertThat(zero.statusCode()).isEqualTo(400);
			assertThat(zero.body()).contains("\"field\":\"limit\"").contains("limit must be positive, was 0");
			HttpResponse<String> period = onA.postJson("/actuator/ratelimits/tunable", "{\"period\": \"soon\"}");
			assertThat(period.statusCode()).isEqualTo(400);
			assertThat(period.body()).contains("\"field\":\"period\"");
			assertThat(onA.postJson("/actuator/ratelimits/nope", "{\"limit\": 4}").statusCode()).isEqualTo(404);
			assertThat(onA.delete("/actuator/ratelimits/nope").statusCode()).isEqualTo(404);

			// B restarts: the override is still in force there, and said so at start-up.
			b.close();
			b = RedisTestApplication.start(properties);
			onB = new Http(RedisTestApplication.port(b));
			assertThat(onB.get("/actuator/ratelimits").body()).contains(limitOf(4)).contains("\"overridden\":true");
			assertThat(output).contains("Rate limit policy 'tunable' is changed by an override kept in the shared store: "
					+ "token-bucket(limit=4, period=PT1H, burst=4) instead of the configured token-bucket(limit=2, "
					+ "period=PT1H, burst=2)");
			HttpResponse<String> restarted = tunable(onB, "newcomer");
			assertThat(restarted.headers().firstValue("RateLimit-Policy")).hasValue("\"tunable\";q=4;w=3600");

			// A restore on B brings A back to the configured values; what was spent still counts.
			HttpResponse<String> restored = onB.delete("/actuator/ratelimits/tunable");
			assertThat(restored.statusCode()).isEqualTo(200);
			assertThat(restored.body()).contains("\"overridden\":false");
			awaitLimit(onA, 2);
			assertThat(onA.get("/actuator/ratelimits").body()).contains("\"overridden\":false");
			HttpResponse<String> back = tunable(onA, "newcomer");
			assertThat(back.statusCode()).isEqualTo(200);
			assertThat(back.headers().firstValue("RateLimit-Policy")).hasValue("\"tunable\";q=2;w=3600");
			assertThat(tunable(onA, "newcomer").statusCode()).as("2 spent of 2").isEqualTo(429);
			assertThat(count(output, "Rate limit policy 'tunable' restored on another instance from token-bucket("
					+ "limit=4, period=PT1H, burst=4) to its configured token-bucket(limit=2, period=PT1H, burst=2)"))
				.isEqualTo(1);
		}
		finally {
			if (b != null) {
				b.close();
			}
		}
	}

	/**
	 * A restore on an instance that has not yet seen the change (its poll is far off) still drops the change
	 * for every instance: the instance that made it goes back to the configured values.
	 */
	static void aRestoreOnAnInstanceThatHasNotSeenTheChangeRestoresEveryInstance(String... redisProperties) {
		String[] properties = properties(redisProperties);
		String[] slowPoll = Stream.concat(Stream.of(properties), Stream.of("rate-limit.store.redis.overrides-poll-interval=1h"))
			.toArray(String[]::new);
		try (ConfigurableApplicationContext a = RedisTestApplication.start(properties);
				ConfigurableApplicationContext b = RedisTestApplication.start(slowPoll)) {
			Http onA = new Http(RedisTestApplication.port(a));
			Http onB = new Http(RedisTestApplication.port(b));
			assertThat(onA.postJson("/actuator/ratelimits/tunable", "{\"limit\": 9}").statusCode()).isEqualTo(200);
			assertThat(onB.get("/actuator/ratelimits").body()).as("B has not seen it").contains(limitOf(2));
			HttpResponse<String> restored = onB.delete("/actuator/ratelimits/tunable");
			assertThat(restored.statusCode()).isEqualTo(200);
			assertThat(restored.body()).contains("\"overridden\":false");
			awaitLimit(onA, 2);
			assertThat(onA.get("/actuator/ratelimits").body()).contains("\"overridden\":false");
		}
	}

	/**
	 * A reset of a key on one instance lets the key through on the other, whose cache kept its rejection
	 * for an hour.
	 */
	static void aResetOnOneInstanceDropsTheRejectionKeptByTheOther(String... redisProperties) {
		String[] properties = properties(redisProperties);
		try (ConfigurableApplicationContext a = RedisTestApplication.start(properties);
				ConfigurableApplicationContext b = RedisTestApplication.start(properties)) {
			Http onA = new Http(RedisTestApplication.port(a));
			Http onB = new Http(RedisTestApplication.port(b));
			tunable(onA, "locked");
			tunable(onA, "locked");
			assertThat(tunable(onA, "locked").statusCode()).isEqualTo(429);
			assertThat(tunable(onB, "locked").statusCode()).isEqualTo(429);
			assertThat(onA.delete("/actuator/ratelimits/tunable/header:locked").statusCode()).isEqualTo(200);
			assertThat(tunable(onA, "locked").statusCode()).as("the instance that reset").isEqualTo(200);
			// B answers from its cache (nothing spent) until it sees the reset, then Redis decides: 1 left.
			await(() -> tunable(onB, "locked").statusCode() == 200, "B lets the reset key through");
			assertThat(tunable(onB, "locked").statusCode()).as("2 of 2 spent since the reset").isEqualTo(429);
		}
	}

	/**
	 * Redis goes away: the override stays in force, requests are decided (on-failure allows), the failing
	 * poll is logged once, and a change cannot be stored (503, nothing changed); a key's budget can be
	 * neither read nor reset (503 each).
	 */
	static void withRedisDownTheOverrideStays(CapturedOutput output, TestRedis redis) {
		// Spring's command timeout left at its default, 60 s: a poll waits that long for a Redis that is gone,
		// and the outage must still be logged within a few poll intervals.
		String[] properties = properties("spring.data.redis.port=" + redis.port(), "rate-limit.store.redis.timeout=200ms");
		try (ConfigurableApplicationContext a = RedisTestApplication.start(properties)) {
			Http onA = new Http(RedisTestApplication.port(a));
			assertThat(onA.postJson("/actuator/ratelimits/tunable", "{\"limit\": 4}").statusCode()).isEqualTo(200);
			redis.kill();
			await(() -> output.toString().contains("Cannot read the rate limit overrides from Redis"), "the poll fails");
			// Polls keep failing for ten intervals: still one line.
			long end = System.nanoTime() + POLL.multipliedBy(10).toNanos();
			while (System.nanoTime() < end) {
				assertThat(tunable(onA, "anyone").statusCode()).isEqualTo(200);
			}
			assertThat(count(output, "Cannot read the rate limit overrides from Redis")).isEqualTo(1);
			assertThat(onA.get("/actuator/ratelimits").body()).contains(limitOf(4)).contains("\"overridden\":true");
			HttpResponse<String> refused = onA.postJson("/actuator/ratelimits/tunable", "{\"limit\": 8}");
			assertThat(refused.statusCode()).isEqualTo(503);
			assertThat(refused.body()).contains("nothing was changed on this instance");
			assertThat(onA.get("/actuator/ratelimits").body()).contains(limitOf(4));
			// A key's budget: not made up by on-failure, and a reset that did not reach Redis says so (no 500).
			HttpResponse<String> read = onA.get("/actuator/ratelimits/tunable/header:anyone");
			assertThat(read.statusCode()).isEqualTo(503);
			assertThat(read.body()).contains("Redis did not answer").contains("nothing was read");
			HttpResponse<String> reset = onA.delete("/actuator/ratelimits/tunable/header:anyone");
			assertThat(reset.statusCode()).isEqualTo(503);
			assertThat(reset.body()).contains("the reset may not have happened");
		}
	}

	private static HttpResponse<String> tunable(Http http, String client) {
		return http.get("/tunable", "X-Client", client);
	}

	private static String limitOf(long limit) {
		return "\"tunable\":{\"name\":\"tunable\",\"algorithm\":\"token-bucket\",\"limit\":" + limit + ",";
	}

	private static void awaitLimit(Http http, long limit) {
		await(() -> http.get("/actuator/ratelimits").body().contains(limitOf(limit)), "the limit " + limit + " in force");
	}

	/** Waits, checking every poll interval, at most {@link #PATIENCE}: a real wait for another instance. */
	private static void await(BooleanSupplier condition, String what) {
		long end = System.nanoTime() + PATIENCE.toNanos();
		while (!condition.getAsBoolean()) {
			assertThat(System.nanoTime() - end).as("waited %s for %s", PATIENCE, what).isNegative();
			RedisProcess.sleep(POLL.toMillis() / 2);
		}
	}

	private static int count(CapturedOutput output, String text) {
		String all = output.toString();
		int count = 0;
		for (int at = all.indexOf(text); at >= 0; at = all.indexOf(text, at + 1)) {
			count++;
		}
		return count;
	}
}
