package io.github.ratelimit.core;

import java.time.Duration;
import java.util.Random;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class TokenBucketTests {

	private final ManualClock clock = new ManualClock();

	@Test
	void allowsTheBurstThenRejects() {
		TokenBucket bucket = new TokenBucket(Limit.builder().limit(10).period(Duration.ofMinutes(1)).build());
		for (int i = 9; i >= 0; i--) {
			Decision decision = bucket.tryAcquire(this.clock.nanos(), 1, 0);
			assertThat(decision.isAllowed()).isTrue();
			assertThat(decision.remaining()).isEqualTo(i);
			assertThat(decision.limit()).isEqualTo(10);
		}
		Decision rejected = bucket.tryAcquire(this.clock.nanos(), 1, 0);
		assertThat(rejected.isAllowed()).isFalse();
		assertThat(rejected.remaining()).isZero();
		assertThat(rejected.retryAfterNanos()).isEqualTo(Duration.ofSeconds(6).toNanos());
		assertThat(rejected.resetNanos()).isEqualTo(Duration.ofMinutes(1).toNanos());
	}

	@Test
	void refillsContinuously() {
		TokenBucket bucket = new TokenBucket(Limit.builder().limit(10).period(Duration.ofSeconds(10)).build());
		drain(bucket);
		this.clock.advance(Duration.ofMillis(999));
		assertThat(bucket.tryAcquire(this.clock.nanos(), 1, 0).isAllowed()).isFalse();
		this.clock.advance(Duration.ofMillis(1));
		Decision decision = bucket.tryAcquire(this.clock.nanos(), 1, 0);
		assertThat(decision.isAllowed()).isTrue();
		assertThat(decision.remaining()).isZero();
		this.clock.advance(Duration.ofSeconds(5));
		assertThat(bucket.peek(this.clock.nanos()).remaining()).isEqualTo(5);
		this.clock.advance(Duration.ofHours(5));
		assertThat(bucket.peek(this.clock.nanos()).remaining()).isEqualTo(10);
		assertThat(bucket.peek(this.clock.nanos()).resetNanos()).isZero();
	}

	@Test
	void burstLargerThanLimit() {
		TokenBucket bucket = new TokenBucket(Limit.builder().limit(1).period(Duration.ofSeconds(1)).burst(5).build());
		assertThat(drain(bucket)).isEqualTo(5);
		this.clock.advance(Duration.ofSeconds(2));
		assertThat(drain(bucket)).isEqualTo(2);
	}

	@Test
	void costTakesSeveralTokensAndRetryAfterCoversTheWholeCost() {
		TokenBucket bucket = new TokenBucket(Limit.builder().limit(10).period(Duration.ofSeconds(10)).build());
		assertThat(bucket.tryAcquire(this.clock.nanos(), 4, 0).remaining()).isEqualTo(6);
		assertThat(bucket.tryAcquire(this.clock.nanos(), 4, 0).remaining()).isEqualTo(2);
		Decision rejected = bucket.tryAcquire(this.clock.nanos(), 4, 0);
		assertThat(rejected.isAllowed()).isFalse();
		assertThat(rejected.remaining()).isEqualTo(2);
		assertThat(rejected.retryAfterNanos()).isEqualTo(Duration.ofSeconds(2).toNanos());
		this.clock.advanceNanos(rejected.retryAfterNanos() - 1);
		assertThat(bucket.tryAcquire(this.clock.nanos(), 4, 0).isAllowed()).isFalse();
		this.clock.advanceNanos(1);
		assertThat(bucket.tryAcquire(this.clock.nanos(), 4, 0).isAllowed()).isTrue();
	}

	@Test
	void rejectionTakesNothing() {
		TokenBucket bucket = new TokenBucket(Limit.builder().limit(2).period(Duration.ofSeconds(2)).build());
		drain(bucket);
		for (int i = 0; i < 100; i++) {
			bucket.tryAcquire(this.clock.nanos(), 1, 0);
		}
		this.clock.advance(Duration.ofSeconds(1));
		assertThat(bucket.tryAcquire(this.clock.nanos(), 1, 0).isAllowed()).isTrue();
	}

	@Test
	void releaseGivesTokensBackButNeverBeyondFull() {
		TokenBucket bucket = new TokenBucket(Limit.builder().limit(5).period(Duration.ofSeconds(5)).build());
		bucket.tryAcquire(this.clock.nanos(), 3, 0);
		assertThat(bucket.release(this.clock.nanos(), 2).remaining()).isEqualTo(4);
		assertThat(bucket.release(this.clock.nanos(), 5).remaining()).isEqualTo(5);
		assertThat(drain(bucket)).isEqualTo(5);
	}

	@Test
	void unevenEmissionIntervalNeverAdmitsMoreThanTheLimitPerPeriod() {
		Limit limit = Limit.builder().limit(7).period(Duration.ofSeconds(1)).build();
		TokenBucket bucket = new TokenBucket(limit);
		assertThat(drain(bucket)).isEqualTo(7);
		this.clock.advance(Duration.ofSeconds(1));
		assertThat(drain(bucket)).isEqualTo(6); // the interval is rounded up by a fraction of a nanosecond
		this.clock.advanceNanos(10);
		assertThat(drain(bucket)).isEqualTo(1);
	}

	/**
	 * Compares every decision with a textbook token bucket (fractional tokens, refilled on read) on
	 * random request sequences.
	 */
	@Test
	void matchesAReferenceTokenBucketOnRandomSequences() {
		Random random = new Random(42);
		for (int run = 0; run < 200; run++) {
			long limitValue = 1 + random.nextInt(20);
			long burst = 1 + random.nextInt(30);
			Duration period = Duration.ofMillis(100L * (1 + random.nextInt(100)));
			// Periods divisible by the limit keep the reference exact in nanoseconds.
			period = Duration.ofNanos(period.toNanos() / limitValue * limitValue);
			Limit limit = Limit.builder().limit(limitValue).period(period).burst(burst).build();
			TokenBucket bucket = new TokenBucket(limit);
			ReferenceBucket reference = new ReferenceBucket(limit, this.clock.nanos());
			for (int step = 0; step < 300; step++) {
				this.clock.advanceNanos((long) (random.nextDouble() * limit.emissionIntervalNanos() * 2));
				long cost = 1 + random.nextInt((int) Math.min(burst, 3));
				Decision actual = bucket.tryAcquire(this.clock.nanos(), cost, 0);
				ReferenceBucket.Outcome expected = reference.acquire(this.clock.nanos(), cost);
				assertThat(actual.isAllowed()).as("run %d step %d", run, step).isEqualTo(expected.allowed());
				assertThat(actual.remaining()).as("remaining, run %d step %d", run, step).isEqualTo(expected.remaining());
				assertThat(actual.resetNanos()).as("reset, run %d step %d", run, step).isEqualTo(expected.resetNanos());
				assertThat(actual.retryAfterNanos()).as("retry-after, run %d step %d", run, step)
					.isEqualTo(expected.retryAfterNanos());
			}
		}
	}

	private int drain(TokenBucket bucket) {
		int allowed = 0;
		while (bucket.tryAcquire(this.clock.nanos(), 1, 0).isAllowed()) {
			allowed++;
		}
		return allowed;
	}

	/** A token bucket as textbooks write it: a token count, refilled from elapsed time on every call. */
	static final class ReferenceBucket {

		record Outcome(boolean allowed, long remaining, long resetNanos, long retryAfterNanos) {
		}

		private final long capacity;

		private final long nanosPerToken;

		// Tokens are counted in nanoseconds of refill time to stay exact: tokens = credit / nanosPerToken.
		private long credit;

		private long last;

		ReferenceBucket(Limit limit, long now) {
			this.capacity = limit.burst();
			this.nanosPerToken = limit.emissionIntervalNanos();
			this.credit = this.capacity * this.nanosPerToken;
			this.last = now;
		}

		Outcome acquire(long now, long cost) {
			this.credit = Math.min(this.capacity * this.nanosPerToken, this.credit + (now - this.last));
			this.last = now;
			long needed = cost * this.nanosPerToken;
			long full = this.capacity * this.nanosPerToken;
			if (this.credit >= needed) {
				this.credit -= needed;
				return new Outcome(true, this.credit / this.nanosPerToken, full - this.credit, 0);
			}
			return new Outcome(false, this.credit / this.nanosPerToken, full - this.credit, needed - this.credit);
		}

	}
}
