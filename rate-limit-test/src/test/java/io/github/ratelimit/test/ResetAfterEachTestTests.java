package io.github.ratelimit.test;

import java.time.Duration;

import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.test.context.junit.jupiter.SpringJUnitConfig;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.Limit;
import io.github.ratelimit.core.RateLimitStore;
import io.github.ratelimit.core.CaffeineRateLimitStore;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two tests in a row on one application context, each spending the whole budget: the second gets it
 * whole too, because the listener (registered by nothing but this artifact's spring.factories) resets
 * the store after the first. The clock never moves, so no budget refills on its own.
 */
@SpringJUnitConfig(ResetAfterEachTestTests.Config.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ResetAfterEachTestTests {

	static final Acquisition ALICE = new Acquisition("login",
			Limit.builder().limit(3).period(Duration.ofMinutes(1)).build(), "user:alice", 1);

	@Autowired
	private RateLimitStore store;

	@Test
	@Order(1)
	void theFirstTestSpendsTheWholeBudget() {
		assertThat(drain(this.store, ALICE)).isEqualTo(3);
	}

	@Test
	@Order(2)
	void theSecondTestGetsTheWholeBudgetToo() {
		assertThat(drain(this.store, ALICE)).isEqualTo(3);
	}

	static int drain(RateLimitStore store, Acquisition acquisition) {
		int allowed = 0;
		while (allowed < 100 && store.tryAcquire(acquisition).isAllowed()) {
			allowed++;
		}
		return allowed;
	}

	@Configuration(proxyBeanMethods = false)
	static class Config {

		@Bean
		ManualClock clock() {
			return new ManualClock();
		}

		@Bean
		CaffeineRateLimitStore store(ManualClock clock) {
			return new CaffeineRateLimitStore(100, clock);
		}

	}
}
