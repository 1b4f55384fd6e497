package io.github.ratelimit.core;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A decision keeps a rejection's retry-after and an allowed request's wait in one field: each reads
 * only its own.
 */
class DecisionTests {

	@Test
	void anAllowedDecisionHasNoRetryAfterAndADelayedOneOnlyItsWait() {
		Decision allowed = Decision.allowed(10, 9, 100, 10);
		assertThat(allowed.retryAfterNanos()).isZero();
		assertThat(allowed.waitNanos()).isZero();
		Decision delayed = Decision.delayed(10, 0, 100, 10, 42);
		assertThat(delayed.isAllowed()).isTrue();
		assertThat(delayed.waitNanos()).isEqualTo(42);
		assertThat(delayed.retryAfterNanos()).isZero();
	}

	@Test
	void aRejectionHasOnlyItsRetryAfter() {
		Decision rejected = Decision.rejected(10, 0, 100, 10, 42);
		assertThat(rejected.isAllowed()).isFalse();
		assertThat(rejected.retryAfterNanos()).isEqualTo(42);
		assertThat(rejected.waitNanos()).isZero();
		assertThat(Decision.rejected(10, 0, 100, 0).retryAfterNanos()).as("at least a nanosecond").isEqualTo(1);
	}

	@Test
	void aDelayedDecisionNeverEqualsARejectionWithTheSameNumbers() {
		Decision delayed = Decision.delayed(10, 0, 100, 10, 42);
		Decision rejected = Decision.rejected(10, 0, 100, 10, 42);
		assertThat(delayed).isNotEqualTo(rejected);
		assertThat(delayed).isEqualTo(Decision.delayed(10, 0, 100, 10, 42));
		assertThat(delayed.toString()).contains("retryAfterNanos=0, waitNanos=42");
		assertThat(rejected.toString()).contains("retryAfterNanos=42, waitNanos=0");
	}
}
