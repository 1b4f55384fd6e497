package io.github.ratelimit.sample;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.github.ratelimit.redis.RedisRateLimitStore;
import io.github.ratelimit.test.ManualClock;
import io.github.ratelimit.testsupport.RedisProcess;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The same tests on the Redis store (the redis profile, a real Redis): each test gets the whole budget,
 * since the artifact deletes the store's keys after each test; and a {@link ManualClock} does not
 * drive Redis, whose scripts read the server's own clock.
 */
// A timeout a starved CI machine cannot miss: on-failure (allow) would let a request through; with it, a short
// warm-up of the decision path is enough.
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT, properties = { "rate-limit.store.redis.timeout=5s",
		"rate-limit.store.redis.warm-up=200ms" })
@ActiveProfiles("redis")
@DirtiesContext
@Import(TestingYourLimitsTests.Clock.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class TestingYourLimitsOnRedisTests {

	private static final RedisProcess redis = RedisProcess.launch();

	@LocalServerPort
	private int port;

	@Autowired
	private ManualClock clock;

	@Autowired
	private RedisRateLimitStore store;

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.port", redis::port);
	}

	@AfterAll
	static void stopRedis() {
		redis.close();
	}

	@Test
	@Order(1)
	void theFirstTestSpendsTheWholeBudget() {
		assertThat(this.store.redisKey("api", "ip:127.0.0.1")).isEqualTo("rate-limit:{api:ip:127.0.0.1}");
		assertThat(statuses(6)).containsExactly(200, 200, 200, 200, 200, 429);
	}

	@Test
	@Order(2)
	void theSecondTestGetsTheWholeBudgetToo() {
		assertThat(statuses(6)).containsExactly(200, 200, 200, 200, 200, 429);
	}

	@Test
	@Order(3)
	void theManualClockDoesNotDriveRedis() {
		assertThat(statuses(6)).containsExactly(200, 200, 200, 200, 200, 429);
		this.clock.advance(Duration.ofMinutes(5));
		assertThat(statuses(1)).as("Redis' clock has not moved").containsExactly(429);
	}

	private List<Integer> statuses(int requests) {
		return TestingYourLimitsTests.statuses(this.port, requests);
	}
}
