package io.github.ratelimit.core;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The windows' defining behaviours, spelled out.
 */
class WindowAlgorithmTests {

	private static final long SECOND = Duration.ofSeconds(1).toNanos();

	// 2026-01-01T00:00:00Z: a whole number of minutes since the epoch
	private final ManualClock clock = new ManualClock(1_767_225_600_000_000_000L);

	@Test
	void fixedWindowAdmitsTwiceTheLimitAroundABoundary() {
		LimiterState window = limit(Algorithm.FIXED_WINDOW).newState();
		this.clock.advance(Duration.ofSeconds(59));
		assertThat(drain(window)).as("the end of one window").isEqualTo(10);
		this.clock.advance(Duration.ofSeconds(1));
		assertThat(drain(window)).as("the start of the next").isEqualTo(10);
		// 20 requests within one second, for a limit of 10 a minute
	}

	@Test
	void slidingWindowsHoldTheLimitAcrossTheBoundary() {
		LimiterState log = limit(Algorithm.SLIDING_WINDOW_LOG).newState();
		LimiterState counter = limit(Algorithm.SLIDING_WINDOW_COUNTER).newState();
		this.clock.advance(Duration.ofSeconds(59));
		assertThat(drain(log)).isEqualTo(10);
		assertThat(drain(counter)).isEqualTo(10);
		this.clock.advance(Duration.ofSeconds(1));
		assertThat(drain(log)).isZero();
		// the previous window still weighs 59/60 of 10: nothing fits yet
		assertThat(drain(counter)).isZero();
		this.clock.advance(Duration.ofSeconds(30));
		assertThat(drain(log)).isZero();
		assertThat(drain(counter)).as("half of the previous window left: 5 of 10").isEqualTo(5);
		this.clock.advance(Duration.ofSeconds(29));
		assertThat(drain(log)).as("the log's 10 left the window at 59 s + 60 s").isEqualTo(10);
	}

	@Test
	void fixedWindowsAreAlignedToTheEpoch() {
		LimiterState window = limit(Algorithm.FIXED_WINDOW).newState();
		this.clock.advance(Duration.ofSeconds(45));
		Decision decision = window.tryAcquire(this.clock.nanos(), 1, 0);
		assertThat(decision.resetNanos()).isEqualTo(15 * SECOND);
	}

	@Test
	void slidingWindowLogRetryAfterIsWhenTheOldestLeaves() {
		LimiterState log = Limit.builder().algorithm(Algorithm.SLIDING_WINDOW_LOG).limit(3).period(Duration.ofSeconds(10))
			.build().newState();
		for (int i = 0; i < 3; i++) {
			assertThat(log.tryAcquire(this.clock.nanos(), 1, 0).isAllowed()).isTrue();
			this.clock.advance(Duration.ofSeconds(2));
		}
		Decision rejected = log.tryAcquire(this.clock.nanos(), 2, 0);
		assertThat(rejected.isAllowed()).isFalse();
		// at 6 s: the first (0 s) leaves at 10 s and the second (2 s) at 12 s; a cost of 2 needs both
		assertThat(rejected.retryAfterNanos()).isEqualTo(6 * SECOND);
		assertThat(rejected.resetNanos()).isEqualTo(8 * SECOND);
	}

	@Test
	void slidingWindowLogGrowsWithUseOnly() {
		SlidingWindowLog log = new SlidingWindowLog(
				Limit.builder().algorithm(Algorithm.SLIDING_WINDOW_LOG).limit(5000).period(Duration.ofMinutes(1)).build());
		assertThat(log.tryAcquire(this.clock.nanos(), 1, 0).remaining()).isEqualTo(4999);
		assertThat(log.toString()).hasSizeLessThan(100);
	}

	@Test
	void unreasonableSettingsAreRefused() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> Limit.builder().algorithm(Algorithm.SLIDING_WINDOW_LOG).limit(10_001)
				.period(Duration.ofMinutes(1)).build())
			.withMessageContaining("the most it accepts is 10000")
			.isInstanceOfSatisfying(InvalidValueException.class, (ex) -> {
				assertThat(ex.name()).isEqualTo("limit");
				assertThat(ex.action()).contains("Use sliding-window-counter");
			});
		assertThatIllegalArgumentException()
			.isThrownBy(() -> Limit.builder().algorithm(Algorithm.SLIDING_WINDOW_COUNTER).limit(1_000_000_000)
				.period(Duration.ofDays(30)).build())
			.withMessageContaining("below 2^61");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> Limit.builder().algorithm(Algorithm.FIXED_WINDOW).limit(10).burst(20)
				.period(Duration.ofMinutes(1)).build())
			.withMessageContaining("burst does not apply to fixed-window");
	}

	private static Limit limit(Algorithm algorithm) {
		return Limit.builder().algorithm(algorithm).limit(10).period(Duration.ofMinutes(1)).build();
	}

	private int drain(LimiterState state) {
		int allowed = 0;
		while (state.tryAcquire(this.clock.nanos(), 1, 0).isAllowed()) {
			allowed++;
		}
		return allowed;
	}
}
