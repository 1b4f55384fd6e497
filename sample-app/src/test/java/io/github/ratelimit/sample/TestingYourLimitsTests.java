package io.github.ratelimit.sample;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;

import io.github.ratelimit.test.ManualClock;
import io.github.ratelimit.testsupport.Http;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How an application tests its limits with rate-limit-test (docs/configuration.md, "Testing your
 * limits"): a {@link ManualClock} as the {@code RateLimitClock} bean, and nothing else: the artifact
 * resets every budget after each test, so each of these tests, on one shared application, gets the
 * whole budget of {@code /api/hello} (5 a minute per IP), and the clock moves only when a test says so.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class TestingYourLimitsTests {

	@LocalServerPort
	private int port;

	@Autowired
	private ManualClock clock;

	@Test
	@Order(1)
	void theFirstTestSpendsTheWholeBudget() {
		assertThat(statuses(6)).containsExactly(200, 200, 200, 200, 200, 429);
	}

	@Test
	@Order(2)
	void theSecondTestGetsTheWholeBudgetToo() {
		assertThat(statuses(6)).containsExactly(200, 200, 200, 200, 200, 429);
	}

	@Test
	@Order(3)
	void aTokenComesBackWhenTheTestMovesTheClock() {
		assertThat(statuses(6)).containsExactly(200, 200, 200, 200, 200, 429);
		this.clock.advance(Duration.ofSeconds(11));
		assertThat(statuses(1)).as("one token every 12 s").containsExactly(429);
		this.clock.advance(Duration.ofSeconds(1));
		assertThat(statuses(2)).containsExactly(200, 429);
	}

	private List<Integer> statuses(int requests) {
		return statuses(this.port, requests);
	}

	/** Asks {@code /api/hello} so many times, for the statuses. */
	static List<Integer> statuses(int port, int requests) {
		Http http = new Http(port);
		List<Integer> statuses = new ArrayList<>();
		for (int i = 0; i < requests; i++) {
			statuses.add(http.get("/api/hello").statusCode());
		}
		return statuses;
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class Clock {

		@Bean
		ManualClock rateLimitClock() {
			return new ManualClock();
		}

	}
}
