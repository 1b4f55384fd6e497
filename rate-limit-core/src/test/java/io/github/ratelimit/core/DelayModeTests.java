package io.github.ratelimit.core;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Delay mode: a request may wait for its turn, up to a bound, instead of being rejected.
 */
class DelayModeTests {

	private static final long SECOND = Duration.ofSeconds(1).toNanos();

	private final ManualClock clock = new ManualClock();

	@Test
	void tokenBucketServesTheBurstAtOnceThenReservesAhead() {
		LimiterState bucket = Limit.builder().limit(1).period(Duration.ofSeconds(1)).burst(3).build().newState();
		long now = this.clock.nanos();
		for (int i = 0; i < 3; i++) {
			assertThat(bucket.tryAcquire(now, 1, 2 * SECOND).waitNanos()).isZero();
		}
		Decision first = bucket.tryAcquire(now, 1, 2 * SECOND);
		assertThat(first.isAllowed()).isTrue();
		assertThat(first.waitNanos()).isEqualTo(SECOND);
		assertThat(bucket.tryAcquire(now, 1, 2 * SECOND).waitNanos()).isEqualTo(2 * SECOND);
		Decision tooLong = bucket.tryAcquire(now, 1, 2 * SECOND);
		assertThat(tooLong.isAllowed()).as("a 3 s wait exceeds the 2 s bound").isFalse();
		assertThat(tooLong.retryAfterNanos()).isEqualTo(3 * SECOND);
		// the rejection reserved nothing: one second later the next turn is 2 s away, within the bound
		this.clock.advance(Duration.ofSeconds(1));
		assertThat(bucket.tryAcquire(this.clock.nanos(), 1, 2 * SECOND).waitNanos()).isEqualTo(2 * SECOND);
	}

	@Test
	void leakyBucketSpacesEvenSimultaneousRequestsAtTheDrainRate() {
		// 4 per second: one every 250 ms, a queue of 10, at most 1 s of waiting.
		LimiterState bucket = Limit.builder()
			.algorithm(Algorithm.LEAKY_BUCKET)
			.limit(4)
			.period(Duration.ofSeconds(1))
			.burst(10)
			.build()
			.newState();
		long now = this.clock.nanos();
		for (int i = 0; i <= 4; i++) {
			Decision decision = bucket.tryAcquire(now, 1, SECOND);
			assertThat(decision.isAllowed()).isTrue();
			assertThat(decision.waitNanos()).isEqualTo(i * SECOND / 4);
		}
		Decision sixth = bucket.tryAcquire(now, 1, SECOND);
		assertThat(sixth.isAllowed()).as("its turn would be 1.25 s away").isFalse();
		assertThat(sixth.retryAfterNanos()).isEqualTo(SECOND / 4);
		this.clock.advanceNanos(SECOND / 4);
		assertThat(bucket.tryAcquire(this.clock.nanos(), 1, SECOND).waitNanos()).isEqualTo(SECOND);
	}

	@Test
	void leakyBucketQueueIsBoundedByTheBurst() {
		LimiterState bucket = Limit.builder()
			.algorithm(Algorithm.LEAKY_BUCKET)
			.limit(10)
			.period(Duration.ofSeconds(1))
			.burst(3)
			.build()
			.newState();
		long now = this.clock.nanos();
		for (int i = 0; i < 3; i++) {
			assertThat(bucket.tryAcquire(now, 1, 10 * SECOND).isAllowed()).isTrue();
		}
		Decision full = bucket.tryAcquire(now, 1, 10 * SECOND);
		assertThat(full.isAllowed()).as("the queue holds three").isFalse();
		assertThat(full.retryAfterNanos()).isEqualTo(SECOND / 10);
	}

	@Test
	void asAMeterTheLeakyBucketIsTheTokenBucket() {
		java.util.Random random = new java.util.Random(7);
		Limit tokens = Limit.builder().limit(5).period(Duration.ofSeconds(1)).burst(8).build();
		Limit leaky = Limit.builder().algorithm(Algorithm.LEAKY_BUCKET).limit(5).period(Duration.ofSeconds(1)).burst(8).build();
		LimiterState a = tokens.newState();
		LimiterState b = leaky.newState();
		for (int i = 0; i < 10_000; i++) {
			this.clock.advanceNanos(random.nextInt(300_000_000));
			long cost = 1 + random.nextInt(3);
			assertThat(b.tryAcquire(this.clock.nanos(), cost, 0)).isEqualTo(a.tryAcquire(this.clock.nanos(), cost, 0));
		}
	}

	@Test
	void windowsNeverWait() {
		for (Algorithm algorithm : new Algorithm[] { Algorithm.FIXED_WINDOW, Algorithm.SLIDING_WINDOW_LOG,
				Algorithm.SLIDING_WINDOW_COUNTER }) {
			LimiterState window = Limit.builder().algorithm(algorithm).limit(1).period(Duration.ofSeconds(1)).build().newState();
			assertThat(window.tryAcquire(this.clock.nanos(), 1, 10 * SECOND).waitNanos()).isZero();
			assertThat(window.tryAcquire(this.clock.nanos(), 1, 10 * SECOND).isAllowed()).as(algorithm.id()).isFalse();
			assertThat(algorithm.canDelay()).isFalse();
		}
	}
}
