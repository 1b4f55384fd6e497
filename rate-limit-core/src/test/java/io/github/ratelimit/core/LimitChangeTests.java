package io.github.ratelimit.core;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * A key's limit changes (its plan, or the policy at run time): {@link LimiterState#moveTo} keeps what
 * was spent and retires the old state.
 */
class LimitChangeTests {

	private static final long SECOND = 1_000_000_000L;

	private final long now = 1_000 * SECOND;

	private static Limit limit(Algorithm algorithm, long limit, Duration period) {
		return Limit.builder().algorithm(algorithm).limit(limit).period(period).build();
	}

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
	void spentTwoOfTwoThenTheLimitGoesToFourGivesExactlyTwoMore(Algorithm algorithm) {
		LimiterState state = limit(algorithm, 2, Duration.ofMinutes(1)).newState();
		assertThat(state.tryAcquire(this.now, 1, 0).isAllowed()).isTrue();
		assertThat(state.tryAcquire(this.now, 1, 0).isAllowed()).isTrue();
		assertThat(state.tryAcquire(this.now, 1, 0).isAllowed()).isFalse();
		LimiterState moved = state.moveTo(limit(algorithm, 4, Duration.ofMinutes(1)), this.now);
		assertThat(moved).isNotNull();
		assertThat(moved.peek(this.now).remaining()).isEqualTo(2);
		assertThat(moved.tryAcquire(this.now, 1, 0).isAllowed()).isTrue();
		assertThat(moved.tryAcquire(this.now, 1, 0).isAllowed()).isTrue();
		assertThat(moved.tryAcquire(this.now, 1, 0).isAllowed()).as("spent tokens stay spent").isFalse();
	}

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
	void aRetiredStateAnswersNullToEveryone(Algorithm algorithm) {
		LimiterState state = limit(algorithm, 2, Duration.ofMinutes(1)).newState();
		state.tryAcquire(this.now, 1, 0);
		assertThat(state.moveTo(limit(algorithm, 4, Duration.ofMinutes(1)), this.now)).isNotNull();
		assertThat(state.tryAcquire(this.now, 1, 0)).isNull();
		assertThat(state.release(this.now, 1)).isNull();
		assertThat(state.peek(this.now)).isNull();
		assertThat(state.moveTo(limit(algorithm, 8, Duration.ofMinutes(1)), this.now)).as("moved once only").isNull();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void aStateMovesOnlyWithinItsAlgorithm(Algorithm algorithm) {
		LimiterState state = ((algorithm == Algorithm.CONCURRENCY) ? Limit.builder().algorithm(algorithm).limit(2).build()
				: limit(algorithm, 2, Duration.ofMinutes(1))).newState();
		Algorithm other = (algorithm == Algorithm.FIXED_WINDOW) ? Algorithm.TOKEN_BUCKET : Algorithm.FIXED_WINDOW;
		assertThatIllegalArgumentException()
			.isThrownBy(() -> state.moveTo(limit(other, 2, Duration.ofMinutes(1)), this.now))
			.withMessageContaining("cannot move a " + algorithm);
	}

	@Test
	void aSmallerBucketKeepsTheDebtSoGoingDownAndUpAgainBuysNothing() {
		Limit proLimit = limit(Algorithm.TOKEN_BUCKET, 100, Duration.ofSeconds(100));
		Limit freeLimit = limit(Algorithm.TOKEN_BUCKET, 10, Duration.ofSeconds(100));
		LimiterState pro = proLimit.newState();
		for (int i = 0; i < 50; i++) {
			assertThat(pro.tryAcquire(this.now, 1, 0).isAllowed()).isTrue();
		}
		// 50 spent; the free plan has room for 10 and refills one per 10 s: 40 tokens of debt first.
		LimiterState free = pro.moveTo(freeLimit, this.now);
		assertThat(free.peek(this.now).remaining()).isZero();
		assertThat(free.tryAcquire(this.now + 400 * SECOND, 1, 0).isAllowed()).isFalse();
		LimiterState proAgain = free.moveTo(proLimit, this.now);
		assertThat(proAgain.peek(this.now).remaining()).as("still 50 spent").isEqualTo(50);
		LimiterState freeAgain = proAgain.moveTo(freeLimit, this.now);
		assertThat(freeAgain.tryAcquire(this.now + 410 * SECOND, 1, 0).isAllowed()).isTrue();
		assertThat(freeAgain.tryAcquire(this.now + 410 * SECOND, 1, 0).isAllowed()).isFalse();
	}

	@Test
	void theBucketRefillsAtTheNewRateFromWhatWasLeft() {
		// 10 per 10 s: 5 spent, 5 s until full. At 10 per 100 s those 5 tokens take 50 s to refill.
		LimiterState state = limit(Algorithm.TOKEN_BUCKET, 10, Duration.ofSeconds(10)).newState();
		for (int i = 0; i < 5; i++) {
			state.tryAcquire(this.now, 1, 0);
		}
		LimiterState slower = state.moveTo(limit(Algorithm.TOKEN_BUCKET, 10, Duration.ofSeconds(100)), this.now);
		assertThat(slower.peek(this.now).remaining()).isEqualTo(5);
		assertThat(slower.peek(this.now).resetNanos()).isEqualTo(50 * SECOND);
	}

	@Test
	void anUntouchedBucketMovesFull() {
		LimiterState state = limit(Algorithm.TOKEN_BUCKET, 2, Duration.ofMinutes(1)).newState();
		LimiterState moved = state.moveTo(limit(Algorithm.TOKEN_BUCKET, 5, Duration.ofMinutes(1)), this.now);
		assertThat(moved.peek(this.now).remaining()).isEqualTo(5);
		assertThat(moved.peek(this.now).resetNanos()).isZero();
	}

	@Test
	void aFixedWindowKeepsItsBoundariesUntilTheNextWindow() {
		long start = 600 * SECOND; // a multiple of 1 min and of 10 min
		LimiterState hourly = limit(Algorithm.FIXED_WINDOW, 3, Duration.ofMinutes(10)).newState();
		hourly.tryAcquire(start + SECOND, 1, 0);
		hourly.tryAcquire(start + SECOND, 1, 0);
		LimiterState minutely = hourly.moveTo(limit(Algorithm.FIXED_WINDOW, 3, Duration.ofMinutes(1)),
				start + 2 * SECOND);
		assertThat(minutely.peek(start + 2 * SECOND).remaining()).isEqualTo(1);
		// The current window is the 10-minute one: at 5 minutes, the count still holds.
		long fiveMinutes = start + 300 * SECOND;
		assertThat(minutely.tryAcquire(fiveMinutes, 1, 0).isAllowed()).isTrue();
		Decision rejected = minutely.tryAcquire(fiveMinutes, 1, 0);
		assertThat(rejected.isAllowed()).isFalse();
		assertThat(rejected.retryAfterNanos()).isEqualTo(300 * SECOND);
		// From the next window on, windows are one minute long.
		long next = start + 600 * SECOND;
		assertThat(minutely.tryAcquire(next, 1, 0).resetNanos()).isEqualTo(60 * SECOND);
	}

	@Test
	void aLogKeepsItsEntriesUnderTheNewPeriod() {
		LimiterState log = limit(Algorithm.SLIDING_WINDOW_LOG, 3, Duration.ofSeconds(10)).newState();
		log.tryAcquire(this.now, 1, 0);
		log.tryAcquire(this.now, 1, 0);
		LimiterState longer = log.moveTo(limit(Algorithm.SLIDING_WINDOW_LOG, 2, Duration.ofSeconds(60)), this.now);
		assertThat(longer.tryAcquire(this.now + 30 * SECOND, 1, 0).isAllowed())
			.as("two entries of 30 s ago still count under a minute").isFalse();
		assertThat(longer.tryAcquire(this.now + 60 * SECOND, 1, 0).isAllowed()).isTrue();
	}

	@Test
	void aBucketMovedBetweenLimitsOfExtremeRatiosStaysSpentWithoutOverflowing() {
		// A million a second, half spent, moved to one a century: the debt would be 5 * 10^23 ns.
		Limit fast = limit(Algorithm.TOKEN_BUCKET, 1_000_000, Duration.ofSeconds(1));
		Limit slow = limit(Algorithm.TOKEN_BUCKET, 1, Duration.ofDays(36_500));
		LimiterState state = fast.newState();
		assertThat(state.tryAcquire(this.now, 500_000, 0).isAllowed()).isTrue();
		LimiterState moved = state.moveTo(slow, this.now);
		assertThat(moved.tryAcquire(this.now, 1, 0).isAllowed()).isFalse();
		// What is carried is bounded by the new bucket (a century) when that is more than 2^61 ns (about 73
		// years): the whole bucket spent, back a century on.
		assertThat(moved.tryAcquire(this.now + Duration.ofDays(99 * 365).toNanos(), 1, 0).isAllowed()).isFalse();
		assertThat(moved.tryAcquire(this.now + Duration.ofDays(36_501).toNanos(), 1, 0).isAllowed()).isTrue();
	}

	@Test
	void aWindowCounterMovedToAMuchLongerPeriodStaysSpentWithoutOverflowing() {
		// 150,000 spent this minute on a plan of 200,000 a minute, then moved to a plan of 100 a day: the count
		// times the new period (in nanoseconds) is beyond 2^63, and a wrapped product let requests through.
		Limit pro = limit(Algorithm.SLIDING_WINDOW_COUNTER, 200_000, Duration.ofMinutes(1));
		Limit free = limit(Algorithm.SLIDING_WINDOW_COUNTER, 100, Duration.ofDays(1));
		LimiterState state = pro.newState();
		assertThat(state.tryAcquire(this.now, 150_000, 0).isAllowed()).isTrue();
		LimiterState moved = state.moveTo(free, this.now);
		Decision decision = moved.tryAcquire(this.now, 1, 0);
		assertThat(decision.isAllowed()).isFalse();
		assertThat(decision.remaining()).isZero();
		assertThat(moved.peek(this.now + Duration.ofDays(1).toNanos()).remaining()).as("next day, still weighed").isZero();
		assertThat(moved.tryAcquire(this.now + Duration.ofDays(2).toNanos(), 1, 0).isAllowed()).as("two days on")
			.isTrue();
	}

	@Test
	void aWindowCounterOfAnotherPeriodCarriesItsEstimate() {
		LimiterState counter = limit(Algorithm.SLIDING_WINDOW_COUNTER, 4, Duration.ofSeconds(10)).newState();
		long windowStart = 100 * SECOND;
		counter.tryAcquire(windowStart, 1, 0);
		counter.tryAcquire(windowStart, 1, 0);
		counter.tryAcquire(windowStart, 1, 0);
		LimiterState moved = counter.moveTo(limit(Algorithm.SLIDING_WINDOW_COUNTER, 4, Duration.ofSeconds(20)),
				windowStart + SECOND);
		assertThat(moved.peek(windowStart + SECOND).remaining()).isEqualTo(1);
	}
}
