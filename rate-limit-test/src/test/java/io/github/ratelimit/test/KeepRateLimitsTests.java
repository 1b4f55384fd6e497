package io.github.ratelimit.test;

import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.junit.jupiter.SpringJUnitConfig;

import io.github.ratelimit.core.RateLimitStore;

import static io.github.ratelimit.test.ResetAfterEachTestTests.ALICE;
import static io.github.ratelimit.test.ResetAfterEachTestTests.drain;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link KeepRateLimits}: the second test goes on where the first stopped, with the budget spent.
 */
@KeepRateLimits
@SpringJUnitConfig(KeepRateLimitsTests.OwnContext.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class KeepRateLimitsTests {

	@Autowired
	private RateLimitStore store;

	@Test
	@Order(1)
	void theFirstTestSpendsTheWholeBudget() {
		assertThat(drain(this.store, ALICE)).isEqualTo(3);
	}

	@Test
	@Order(2)
	void theSecondFindsItSpent() {
		assertThat(drain(this.store, ALICE)).isZero();
	}

	/** A context of its own: the spent budget stays here. */
	@Configuration(proxyBeanMethods = false)
	@Import(ResetAfterEachTestTests.Config.class)
	static class OwnContext {

	}
}
