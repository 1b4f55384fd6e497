package io.github.ratelimit.core;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link Decision#nextNanos()}, the {@code t} of draft-ietf-httpapi-ratelimit-headers 10/11: the time
 * until additional quota is made available, per algorithm, on readable numbers ({@link
 * AlgorithmReferenceTests} checks it against brute force on random sequences).
 */
class NextQuotaTests {

	private static final long SECOND = 1_000_000_000L;

	/** An epoch-aligned start, so windows begin at {@code T0}. */
	private static final long T0 = 1_767_225_600L * SECOND;

	@Test
	void tokenBucketsAndLeakyBucketsGiveTheNextToken() {
		for (Algorithm algorithm : new Algorithm[] { Algorithm.TOKEN_BUCKET, Algorithm.LEAKY_BUCKET }) {
			LimiterState bucket = limit(algorithm, 10, Duration.ofSeconds(10)).newState();
			assertThat(bucket.peek(T0).nextNanos()).as("nothing spent").isZero();
			Decision first = bucket.tryAcquire(T0, 1, 0);
			assertThat(first.nextNanos()).isEqualTo(SECOND);
			assertThat(first.resetNanos()).isEqualTo(SECOND);
			Decision fourth = bucket.tryAcquire(T0, 3, 0);
			assertThat(fourth.remaining()).isEqualTo(6);
			assertThat(fourth.nextNanos()).as("one token, not the whole bucket").isEqualTo(SECOND);
			assertThat(fourth.resetNanos()).isEqualTo(4 * SECOND);
			assertThat(bucket.peek(T0 + 300_000_000L).nextNanos()).isEqualTo(700_000_000L);
			assertThat(bucket.tryAcquire(T0, 6, 0).nextNanos()).isEqualTo(SECOND);
			Decision rejected = bucket.tryAcquire(T0 + SECOND / 2, 3, 0);
			assertThat(rejected.isAllowed()).isFalse();
			assertThat(rejected.nextNanos()).isEqualTo(SECOND / 2);
			assertThat(rejected.retryAfterNanos()).isEqualTo(2 * SECOND + SECOND / 2);
			assertThat(bucket.peek(T0 + 10 * SECOND).nextNanos()).as("full again").isZero();
		}
	}

	@Test
	void aReservationAheadCountsAsSpent() {
		LimiterState bucket = limit(Algorithm.TOKEN_BUCKET, 1, Duration.ofSeconds(2)).newState();
		bucket.tryAcquire(T0, 1, 0);
		Decision delayed = bucket.tryAcquire(T0, 1, 10 * SECOND);
		assertThat(delayed.waitNanos()).isEqualTo(2 * SECOND);
		// The reserved token comes in 2 s and is already taken: the next one is 2 s later.
		assertThat(delayed.nextNanos()).isEqualTo(4 * SECOND);
	}

	@Test
	void aFixedWindowGivesItsEnd() {
		LimiterState window = limit(Algorithm.FIXED_WINDOW, 3, Duration.ofMinutes(1)).newState();
		assertThat(window.peek(T0 + 10 * SECOND).nextNanos()).isZero();
		assertThat(window.tryAcquire(T0 + 10 * SECOND, 1, 0).nextNanos()).isEqualTo(50 * SECOND);
		window.tryAcquire(T0 + 20 * SECOND, 2, 0);
		Decision rejected = window.tryAcquire(T0 + 30 * SECOND, 1, 0);
		assertThat(rejected.nextNanos()).isEqualTo(30 * SECOND).isEqualTo(rejected.retryAfterNanos());
	}

	@Test
	void aSlidingWindowLogGivesTheAgeingOutOfItsOldestEntry() {
		LimiterState log = limit(Algorithm.SLIDING_WINDOW_LOG, 3, Duration.ofMinutes(1)).newState();
		log.tryAcquire(T0, 1, 0);
		log.tryAcquire(T0 + 10 * SECOND, 1, 0);
		Decision third = log.tryAcquire(T0 + 20 * SECOND, 1, 0);
		assertThat(third.nextNanos()).isEqualTo(40 * SECOND);
		assertThat(third.resetNanos()).as("until the newest leaves").isEqualTo(60 * SECOND);
		Decision rejected = log.tryAcquire(T0 + 30 * SECOND, 2, 0);
		assertThat(rejected.nextNanos()).isEqualTo(30 * SECOND);
		assertThat(rejected.retryAfterNanos()).as("two must leave").isEqualTo(40 * SECOND);
		assertThat(log.peek(T0 + 80 * SECOND).nextNanos()).as("all aged out").isZero();
	}

	@Test
	void aSlidingWindowCounterGivesTheDropThatAdmitsOneMoreRequestOfTheCost() {
		LimiterState counter = limit(Algorithm.SLIDING_WINDOW_COUNTER, 10, Duration.ofSeconds(10)).newState();
		counter.tryAcquire(T0, 10, 0);
		// 5 s into the next window the previous 10 weigh 5: 5 remain; a sixth needs the weight at 4,
		// one second later.
		Decision peek = counter.peek(T0 + 15 * SECOND);
		assertThat(peek.remaining()).isEqualTo(5);
		assertThat(peek.nextNanos()).isEqualTo(SECOND);
		// After a request of cost 2, 3 remain: one more of cost 2 fits now; room for two more (4) needs
		// the previous window's weight at 4, a second later.
		Decision costly = counter.tryAcquire(T0 + 15 * SECOND, 2, 0);
		assertThat(costly.remaining()).isEqualTo(3);
		assertThat(costly.nextNanos()).isEqualTo(SECOND);
		assertThat(counter.peek(T0 + 40 * SECOND).nextNanos()).isZero();
	}

	private static Limit limit(Algorithm algorithm, long limit, Duration period) {
		return Limit.builder().algorithm(algorithm).limit(limit).period(period).build();
	}
}
