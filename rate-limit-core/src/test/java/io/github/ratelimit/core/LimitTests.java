package io.github.ratelimit.core;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class LimitTests {

	@Test
	void burstDefaultsToTheLimit() {
		Limit limit = Limit.builder().limit(100).period(Duration.ofMinutes(1)).build();
		assertThat(limit.burst()).isEqualTo(100);
		assertThat(limit.algorithm()).isEqualTo(Algorithm.TOKEN_BUCKET);
		assertThat(limit.emissionIntervalNanos()).isEqualTo(Duration.ofMillis(600).toNanos());
		assertThat(limit.toleranceNanos()).isEqualTo(Duration.ofMinutes(1).toNanos());
	}

	@Test
	void refusesValuesThatCannotWork() {
		assertThatIllegalArgumentException().isThrownBy(() -> Limit.builder().limit(0).period(Duration.ofSeconds(1)).build())
			.withMessageContaining("limit must be positive");
		assertThatIllegalArgumentException().isThrownBy(() -> Limit.builder().limit(-5).period(Duration.ofSeconds(1)).build())
			.withMessageContaining("limit must be positive");
		assertThatIllegalArgumentException().isThrownBy(() -> Limit.builder().limit(1).period(Duration.ZERO).build())
			.withMessageContaining("period must be positive");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> Limit.builder().limit(1).period(Duration.ofSeconds(-1)).build())
			.withMessageContaining("period must be positive");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> Limit.builder().limit(1).period(Duration.ofSeconds(1)).burst(0).build())
			.withMessageContaining("burst must be positive");
		assertThatIllegalArgumentException().isThrownBy(() -> Limit.builder().limit(1000).period(Duration.ofNanos(10)).build())
			.withMessageContaining("one per nanosecond");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> Limit.builder().limit(1).period(Duration.ofDays(365)).burst(101).build())
			.withMessageContaining("takes longer than 100 years to refill")
			.isInstanceOfSatisfying(InvalidValueException.class, (ex) -> {
				assertThat(ex.name()).isEqualTo("burst");
				assertThat(ex.action()).isEqualTo("Lower the burst");
			});
		// The RateLimit headers carry limit and burst as structured-field integers: 15 digits at most.
		assertThat(Limit.builder().limit(999_999_999_999_999L).period(Duration.ofDays(365)).build().limit())
			.isEqualTo(999_999_999_999_999L);
		assertThatIllegalArgumentException()
			.isThrownBy(() -> Limit.builder().limit(1_000_000_000_000_000L).period(Duration.ofDays(365)).build())
			.withMessageContaining("limit must be at most 999,999,999,999,999 (15 digits");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> Limit.builder().limit(1).period(Duration.ofDays(365)).burst(Long.MAX_VALUE / 2).build())
			.withMessageContaining("burst must be at most 999,999,999,999,999");
	}

	@Test
	void algorithmNamesAreForgiving() {
		assertThat(Algorithm.fromId("token-bucket")).isEqualTo(Algorithm.TOKEN_BUCKET);
		assertThat(Algorithm.fromId("TOKEN_BUCKET")).isEqualTo(Algorithm.TOKEN_BUCKET);
		assertThatIllegalArgumentException().isThrownBy(() -> Algorithm.fromId("magic"))
			.withMessage("Unknown algorithm 'magic'; supported: token-bucket, fixed-window, sliding-window-log, "
					+ "sliding-window-counter, leaky-bucket, concurrency");
	}

	@Test
	void onlyTheBucketsHaveABurstAndCanDelay() {
		for (Algorithm algorithm : Algorithm.values()) {
			boolean bucket = algorithm == Algorithm.TOKEN_BUCKET || algorithm == Algorithm.LEAKY_BUCKET;
			assertThat(algorithm.hasBurst()).as(algorithm.id()).isEqualTo(bucket);
			assertThat(algorithm.canDelay()).as(algorithm.id()).isEqualTo(bucket);
			assertThat(algorithm.isRate()).as(algorithm.id()).isEqualTo(algorithm != Algorithm.CONCURRENCY);
			assertThat(algorithm).hasToString(algorithm.id());
		}
	}

	@Test
	void acquisitionRefusesCostsTheBurstCannotServe() {
		Limit limit = Limit.builder().limit(5).period(Duration.ofSeconds(1)).build();
		assertThatIllegalArgumentException().isThrownBy(() -> new Acquisition("api", limit, "k", 6))
			.withMessageContaining("between 1 and the burst (5) of 'api'");
		assertThatIllegalArgumentException().isThrownBy(() -> new Acquisition("api", limit, "k", 0));
	}
}
