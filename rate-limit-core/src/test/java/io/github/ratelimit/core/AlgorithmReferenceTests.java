package io.github.ratelimit.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Function;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every algorithm against a plain reference model, on many random request sequences with a fake
 * clock: every decision and every header value must agree.
 * <p>
 * The references only know how to count ({@code fits}, {@code admit}, {@code remaining},
 * {@code empty}); the times in a decision are found by searching the reference's future for the first
 * instant at which the request fits (retry-after) or the budget is whole (reset). So the algorithms'
 * closed-form times are checked against brute force, not against the same formula.
 */
class AlgorithmReferenceTests {

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
	void matchesTheReferenceOnRandomSequences(Algorithm algorithm) {
		Random random = new Random(algorithm.ordinal() * 7919L + 17);
		for (int run = 0; run < 150; run++) {
			long limitValue = 1 + random.nextInt(12);
			// Periods divisible by the limit keep the buckets' references exact in nanoseconds.
			long period = Duration.ofMillis(50L * (1 + random.nextInt(200))).toNanos() / limitValue * limitValue;
			Limit.Builder builder = Limit.builder().algorithm(algorithm).limit(limitValue).period(Duration.ofNanos(period));
			if (algorithm.hasBurst()) {
				builder.burst(1 + random.nextInt(15));
			}
			Limit limit = builder.build();
			ManualClock clock = new ManualClock(1_767_225_600_000_000_000L + random.nextInt(1_000_000_000));
			LimiterState state = limit.newState();
			Reference reference = REFERENCES.get(algorithm).apply(limit);
			for (int step = 0; step < 200; step++) {
				long gap = (random.nextInt(10) == 0) ? (long) (random.nextDouble() * period * 2)
						: (long) (random.nextDouble() * period / limitValue);
				clock.advanceNanos(gap);
				long now = clock.nanos();
				long cost = 1 + random.nextInt((int) Math.min(limit.burst(), 3));
				if (random.nextInt(3) == 0) {
					assertThat(state.check(now, cost)).as("check, %s run %d step %d", limit, run, step)
						.isEqualTo(reference.check(now, cost));
				}
				Decision actual = state.tryAcquire(now, cost, 0);
				Decision expected = reference.decide(now, cost);
				assertThat(actual).as("%s run %d step %d", limit, run, step).isEqualTo(expected);
				if (random.nextInt(20) == 0 && actual.isAllowed()) {
					Decision released = state.release(now, cost);
					reference.release(now, cost);
					assertThat(released).as("release, %s run %d step %d", limit, run, step)
						.isEqualTo(reference.peek(now, cost));
				}
			}
		}
	}

	static final Map<Algorithm, Function<Limit, Reference>> REFERENCES = Map.of(Algorithm.TOKEN_BUCKET,
			CreditBucket::new, Algorithm.LEAKY_BUCKET, CreditBucket::new, Algorithm.FIXED_WINDOW, Windows::new,
			Algorithm.SLIDING_WINDOW_LOG, Log::new, Algorithm.SLIDING_WINDOW_COUNTER, Counter::new);

	/**
	 * A counting model; its decisions' times are found by search.
	 */
	abstract static class Reference {

		final Limit limit;

		Reference(Limit limit) {
			this.limit = limit;
		}

		abstract boolean fits(long now, long cost);

		abstract void admit(long now, long cost);

		abstract void release(long now, long cost);

		abstract long remaining(long now);

		abstract boolean empty(long now);

		Decision decide(long now, long cost) {
			if (fits(now, cost)) {
				admit(now, cost);
				return Decision.allowed(this.limit.limit(), remaining(now), firstInstant(now, (t) -> empty(t)),
						next(now, cost));
			}
			return Decision.rejected(this.limit.limit(), remaining(now), firstInstant(now, (t) -> empty(t)),
					next(now, cost), firstInstant(now, (t) -> fits(t, cost)));
		}

		/** What a request would be told without being admitted: the state as it is, or the rejection. */
		Decision check(long now, long cost) {
			if (fits(now, cost)) {
				return peek(now, cost);
			}
			return Decision.rejected(this.limit.limit(), remaining(now), firstInstant(now, (t) -> empty(t)),
					next(now, cost), firstInstant(now, (t) -> fits(t, cost)));
		}

		Decision peek(long now, long cost) {
			return Decision.allowed(this.limit.limit(), remaining(now), firstInstant(now, (t) -> empty(t)),
					next(now, cost));
		}

		/**
		 * When additional quota is made available (the {@code t} of draft-ietf-httpapi-ratelimit-headers
		 * 10/11): the first instant more remains than now; zero when nothing is spent.
		 */
		long next(long now, long cost) {
			long remaining = remaining(now);
			return empty(now) ? 0 : firstInstant(now, (t) -> remaining(t) > remaining);
		}

		/** The least {@code d >= 0} such that the condition holds at {@code now + d} (it stays true after). */
		long firstInstant(long now, java.util.function.LongPredicate condition) {
			long low = 0;
			long high = 4 * Math.max(this.limit.period().toNanos(), this.limit.toleranceNanos()) + 1;
			if (condition.test(now)) {
				return 0;
			}
			while (high - low > 1) {
				long middle = low + (high - low) / 2;
				if (condition.test(now + middle)) {
					high = middle;
				}
				else {
					low = middle;
				}
			}
			return high;
		}

	}

	/** A textbook bucket: credit (in nanoseconds of refill) filled from elapsed time. */
	static final class CreditBucket extends Reference {

		private final long full;

		private final long perToken;

		private long credit;

		private long last = Long.MIN_VALUE;

		CreditBucket(Limit limit) {
			super(limit);
			this.perToken = limit.emissionIntervalNanos();
			this.full = limit.burst() * this.perToken;
			this.credit = this.full;
		}

		private long creditAt(long now) {
			return (this.last == Long.MIN_VALUE) ? this.full : Math.min(this.full, this.credit + (now - this.last));
		}

		@Override
		boolean fits(long now, long cost) {
			return creditAt(now) >= cost * this.perToken;
		}

		@Override
		void admit(long now, long cost) {
			this.credit = creditAt(now) - cost * this.perToken;
			this.last = now;
		}

		@Override
		void release(long now, long cost) {
			this.credit = Math.min(this.full, creditAt(now) + cost * this.perToken);
			this.last = now;
		}

		@Override
		long remaining(long now) {
			return creditAt(now) / this.perToken;
		}

		@Override
		boolean empty(long now) {
			return creditAt(now) == this.full;
		}

	}

	/** Counts per epoch-aligned window index. */
	static final class Windows extends Reference {

		private final Map<Long, Long> counts = new HashMap<>();

		Windows(Limit limit) {
			super(limit);
		}

		private long window(long now) {
			return Math.floorDiv(now, this.limit.period().toNanos());
		}

		private long count(long now) {
			return this.counts.getOrDefault(window(now), 0L);
		}

		@Override
		boolean fits(long now, long cost) {
			return count(now) + cost <= this.limit.limit();
		}

		@Override
		void admit(long now, long cost) {
			this.counts.merge(window(now), cost, Long::sum);
		}

		@Override
		void release(long now, long cost) {
			this.counts.put(window(now), Math.max(0, count(now) - cost));
		}

		@Override
		long remaining(long now) {
			return this.limit.limit() - count(now);
		}

		@Override
		boolean empty(long now) {
			return count(now) == 0;
		}

	}

	/** Every admitted token's time, forever; counts those in (now - period, now]. */
	static final class Log extends Reference {

		private final List<Long> admitted = new ArrayList<>();

		Log(Limit limit) {
			super(limit);
		}

		private long count(long now) {
			long from = now - this.limit.period().toNanos();
			return this.admitted.stream().filter((t) -> t > from && t <= now).count();
		}

		@Override
		boolean fits(long now, long cost) {
			return count(now) + cost <= this.limit.limit();
		}

		@Override
		void admit(long now, long cost) {
			for (int i = 0; i < cost; i++) {
				this.admitted.add(now);
			}
		}

		@Override
		void release(long now, long cost) {
			for (int i = 0; i < cost && !this.admitted.isEmpty(); i++) {
				this.admitted.remove(this.admitted.size() - 1);
			}
		}

		@Override
		long remaining(long now) {
			return this.limit.limit() - count(now);
		}

		@Override
		boolean empty(long now) {
			// Looking ahead: nothing admitted up to now still counts.
			long from = now - this.limit.period().toNanos();
			return this.admitted.stream().noneMatch((t) -> t > from);
		}

	}

	/** Counts per window; the estimate computed exactly as a fraction over the period. */
	static final class Counter extends Reference {

		private final Map<Long, Long> counts = new HashMap<>();

		Counter(Limit limit) {
			super(limit);
		}

		private long p() {
			return this.limit.period().toNanos();
		}

		/** The estimate times the period: previous * (period - elapsed) + current * period. */
		private java.math.BigInteger scaledEstimate(long now, long extra) {
			long window = Math.floorDiv(now, p());
			long elapsed = now - window * p();
			long previous = this.counts.getOrDefault(window - 1, 0L);
			long current = this.counts.getOrDefault(window, 0L) + extra;
			return java.math.BigInteger.valueOf(previous)
				.multiply(java.math.BigInteger.valueOf(p() - elapsed))
				.add(java.math.BigInteger.valueOf(current).multiply(java.math.BigInteger.valueOf(p())));
		}

		private java.math.BigInteger scaledLimit() {
			return java.math.BigInteger.valueOf(this.limit.limit()).multiply(java.math.BigInteger.valueOf(p()));
		}

		@Override
		boolean fits(long now, long cost) {
			return scaledEstimate(now, cost).compareTo(scaledLimit()) <= 0;
		}

		@Override
		void admit(long now, long cost) {
			this.counts.merge(Math.floorDiv(now, p()), cost, Long::sum);
		}

		@Override
		void release(long now, long cost) {
			long window = Math.floorDiv(now, p());
			this.counts.put(window, Math.max(0, this.counts.getOrDefault(window, 0L) - cost));
		}

		@Override
		long remaining(long now) {
			java.math.BigInteger[] division = scaledLimit().subtract(scaledEstimate(now, 0))
				.divideAndRemainder(java.math.BigInteger.valueOf(p()));
			long floor = division[0].longValue() - ((division[1].signum() < 0) ? 1 : 0);
			return Math.max(0, floor);
		}

		@Override
		boolean empty(long now) {
			return scaledEstimate(now, 0).signum() == 0;
		}

		/** The counter's additional quota: room for one more request of the cost (the whole quota at most). */
		@Override
		long next(long now, long cost) {
			long room = Math.min(this.limit.limit(), (remaining(now) / cost + 1) * cost);
			return empty(now) ? 0 : firstInstant(now, (t) -> remaining(t) >= room);
		}

	}
}
