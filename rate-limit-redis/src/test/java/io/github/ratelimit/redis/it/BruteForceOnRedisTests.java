package io.github.ratelimit.redis.it;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
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
 * {@code slow-down} and {@code ban} shared by two application instances on one Redis (standalone, and a
 * three-master Cluster), on the wall clock: 5 failures per user, slowed once 2 are spent (300 ms, 600 ms,
 * at most 900 ms), then locked out, whichever instance each attempt reaches; and a user that gets 2 lockout
 * answers is banned by both. Neither needs a store call of its own: the delay comes from the budget's
 * reply, the ban from the budget's own script call.
 */
class BruteForceOnRedisTests {

	private static final long DELAY = 300;

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
	void attemptsOnEitherInstanceAreSlowedDownThenLockedOut() {
		try (ConfigurableApplicationContext first = RedisTestApplication.start(properties("spring.data.redis.port=" + redis.port()));
				ConfigurableApplicationContext second = RedisTestApplication.start(properties("spring.data.redis.port=" + redis.port()))) {
			List<Http> instances = List.of(new Http(RedisTestApplication.port(first)),
					new Http(RedisTestApplication.port(second)));
			String user = "ann-" + System.nanoTime();
			List<Long> millis = new ArrayList<>();
			for (int i = 0; i < 5; i++) {
				Timed timed = guess(instances.get(i % 2), user);
				assertThat(timed.status()).as("attempt %d", i + 1).isEqualTo(401);
				millis.add(timed.millis());
				// Told on the metrics, not by an upper bound of the wall clock: a loaded machine answers late.
				assertThat(slowed(first, second)).as("slowed after attempt %d", i + 1).isEqualTo(Math.max(0, i - 1));
			}
			assertThat(millis.get(2)).as("after 2 failures").isGreaterThanOrEqualTo(DELAY);
			assertThat(millis.get(3)).as("after 3, doubled").isGreaterThanOrEqualTo(2 * DELAY);
			assertThat(millis.get(4)).as("after 4, max-delay").isGreaterThanOrEqualTo(3 * DELAY);
			for (Http http : instances) {
				Timed locked = guess(http, user);
				assertThat(locked.status()).isEqualTo(429);
			}
			// That a lockout is never delayed is the exchange's, whatever the store: SlowDownTests shows it.
			Timed other = guess(instances.get(1), "bob-" + System.nanoTime());
			assertThat(other.status()).isEqualTo(401);
			assertThat(slowed(first, second)).as("another user is not slowed").isEqualTo(3);
		}
	}

	@Test
	void twentyParallelAttemptsOnTwoInstancesOfAClusterAreSlowedAsIfTheyCameOneByOne() throws Exception {
		String nodes = "spring.data.redis.cluster.nodes=" + cluster.nodes();
		try (ConfigurableApplicationContext first = RedisTestApplication.start(properties(nodes));
				ConfigurableApplicationContext second = RedisTestApplication.start(properties(nodes))) {
			List<Http> instances = List.of(new Http(RedisTestApplication.port(first)),
					new Http(RedisTestApplication.port(second)));
			for (Http http : instances) {
				assertThat(guess(http, "warm-up").status()).isEqualTo(401);
			}
			String user = "carl-" + System.nanoTime();
			List<Timed> answers = Collections.synchronizedList(new ArrayList<>());
			Map<Integer, Integer> statuses = AtOnce.statuses(20, (i) -> () -> {
				Timed timed = guess(instances.get(i % 2), user);
				answers.add(timed);
				return timed.status();
			});
			assertThat(statuses).containsExactlyInAnyOrderEntriesOf(Map.of(401, 5, 429, 15));
			List<Long> failures = answers.stream().filter((t) -> t.status() == 401).map(Timed::millis).sorted().toList();
			assertThat(failures.subList(2, 5)).satisfiesExactly((third) -> assertThat(third).isGreaterThanOrEqualTo(DELAY),
					(fourth) -> assertThat(fourth).isGreaterThanOrEqualTo(2 * DELAY),
					(fifth) -> assertThat(fifth).isGreaterThanOrEqualTo(3 * DELAY));
		}
	}

	@Test
	void aUserBannedThroughOneInstanceIsBannedByTheOtherUntilADeleteOnEitherLiftsIt() {
		for (String redisProperty : List.of("spring.data.redis.port=" + redis.port(),
				"spring.data.redis.cluster.nodes=" + cluster.nodes())) {
			String[] properties = banProperties(redisProperty);
			try (ConfigurableApplicationContext first = RedisTestApplication.start(properties);
					ConfigurableApplicationContext second = RedisTestApplication.start(properties)) {
				Http one = new Http(RedisTestApplication.port(first));
				Http two = new Http(RedisTestApplication.port(second));
				String user = "mallory-" + System.nanoTime();
				assertThat(one.post("/guess", "user=" + user + "&ok=false").statusCode()).isEqualTo(401);
				assertThat(two.post("/guess", "user=" + user + "&ok=false").statusCode()).isEqualTo(401);
				HttpResponse<String> lockout = one.post("/guess", "user=" + user + "&ok=true");
				assertThat(lockout.statusCode()).isEqualTo(429);
				assertThat(lockout.body()).doesNotContain("banned until");
				HttpResponse<String> started = two.post("/guess", "user=" + user + "&ok=true");
				assertThat(started.body()).as(redisProperty).contains("banned until");
				assertThat(started.headers().firstValue("Retry-After")).hasValue("86400");
				HttpResponse<String> banned = one.post("/guess", "user=" + user + "&ok=true");
				assertThat(banned.statusCode()).isEqualTo(429);
				assertThat(banned.body()).as("the other instance bans too").contains("banned until");
				assertThat(one.get("/actuator/ratelimits/banned/param:" + user).body()).contains("\"bannedUntil\":\"");
				assertThat(two.delete("/actuator/ratelimits/banned/param:" + user).statusCode()).isEqualTo(200);
				assertThat(one.post("/guess", "user=" + user + "&ok=true").statusCode())
					.as("lifted everywhere at once: a ban is never kept in process").isEqualTo(200);
			}
		}
	}

	private static String[] banProperties(String redisProperty) {
		return new String[] { redisProperty, "rate-limit.store.redis.timeout=2s", "rate-limit.store.redis.on-failure=deny",
				"management.endpoints.web.exposure.include=ratelimits", "rate-limit.policies.banned.limit=2",
				"rate-limit.policies.banned.period=1h", "rate-limit.policies.banned.key=param:user",
				"rate-limit.policies.banned.count=failures", "rate-limit.policies.banned.ban.after=2",
				"rate-limit.policies.banned.ban.duration=24h", "rate-limit.rules[4].path=/guess",
				"rate-limit.rules[4].policies=banned" };
	}

	private static String[] properties(String redisProperty) {
		return new String[] { redisProperty, "rate-limit.store.redis.timeout=2s", "rate-limit.store.redis.on-failure=deny",
				"rate-limit.delay.park=true", "server.tomcat.threads.max=64", "rate-limit.policies.login.limit=5",
				"rate-limit.policies.login.period=15m", "rate-limit.policies.login.key=param:user",
				"rate-limit.policies.login.count=failures", "rate-limit.policies.login.slow-down.after=2",
				"rate-limit.policies.login.slow-down.delay=" + DELAY + "ms",
				"rate-limit.policies.login.slow-down.max-delay=" + (3 * DELAY) + "ms", "rate-limit.rules[4].path=/guess",
				"rate-limit.rules[4].policies=login" };
	}

	/** Requests slowed down on both instances, from their metrics. */
	private static double slowed(ConfigurableApplicationContext... instances) {
		double slowed = 0;
		for (ConfigurableApplicationContext instance : instances) {
			Counter counter = instance.getBean(MeterRegistry.class).find("ratelimit.decisions").tag("policy", "login")
				.tag("outcome", "slowed").counter();
			slowed += (counter != null) ? counter.count() : 0;
		}
		return slowed;
	}

	private static Timed guess(Http http, String user) {
		long start = System.nanoTime();
		HttpResponse<String> response = http.post("/guess", "user=" + user + "&ok=false");
		return new Timed(response.statusCode(), TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
	}

	record Timed(int status, long millis) {
	}

}
