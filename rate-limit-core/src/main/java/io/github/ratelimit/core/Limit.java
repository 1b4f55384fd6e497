package io.github.ratelimit.core;

import java.time.Duration;
import java.util.Objects;

/**
 * What one limit allows: {@code limit} requests (tokens) per {@code period}, with room for a burst of
 * {@code burst}, decided by an {@link Algorithm}. Immutable and thread-safe; built with
 * {@link #builder()}, which refuses values that cannot work.
 */
public final class Limit {

	/** The largest limit a concurrency limit accepts: requests in flight per key (one lease each in Redis). */
	public static final long MAX_CONCURRENCY_LIMIT = 10_000;

	/** The nominal period of a concurrency limit, which has none: the retry-after of its rejections. */
	static final Duration CONCURRENCY_PERIOD = Duration.ofSeconds(1);

	/** The largest limit a sliding-window-log accepts: 80 KB of timestamps per key at most. */
	public static final long MAX_LOG_LIMIT = 10_000;

	static final long MAX_COUNTER_PRODUCT = 1L << 61;

	/** The largest limit and burst: a structured-field integer of the RateLimit headers has at most 15 digits. */
	static final long MAX_HEADER_INTEGER = 999_999_999_999_999L;

	private final Algorithm algorithm;

	private final long limit;

	private final Duration period;

	private final long burst;

	private final long emissionIntervalNanos;

	private final long toleranceNanos;

	private Limit(Builder builder) {
		this.algorithm = builder.algorithm;
		this.limit = builder.limit;
		this.period = builder.period;
		this.burst = (builder.burst != null) ? builder.burst : builder.limit;
		long periodNanos = this.period.toNanos();
		// Rounded up: a limiter may be a hair stricter than configured, never looser.
		this.emissionIntervalNanos = -Math.floorDiv(-periodNanos, this.limit);
		this.toleranceNanos = Math.multiplyExact(this.emissionIntervalNanos, this.burst);
	}

	/**
	 * Starts a builder.
	 * @return a builder for a token bucket with no values set
	 */
	public static Builder builder() {
		return new Builder();
	}

	/**
	 * Returns the algorithm that decides.
	 * @return the algorithm
	 */
	public Algorithm algorithm() {
		return this.algorithm;
	}

	/**
	 * Returns how many requests (tokens) a period allows.
	 * @return the quota per period, positive
	 */
	public long limit() {
		return this.limit;
	}

	/**
	 * Returns the period the quota refers to.
	 * @return the period, positive; for {@link Algorithm#CONCURRENCY}, which has none, a nominal second
	 * (the retry-after of its rejections)
	 */
	public Duration period() {
		return this.period;
	}

	/**
	 * Returns the capacity: the most tokens that may be spent at once (a window's capacity is its
	 * limit).
	 * @return the burst, positive; defaults to {@link #limit()}
	 */
	public long burst() {
		return this.burst;
	}

	/**
	 * Returns the time one token takes to refill ({@code period / limit}, rounded up to a nanosecond).
	 * @return nanoseconds per token
	 */
	public long emissionIntervalNanos() {
		return this.emissionIntervalNanos;
	}

	/**
	 * Returns the time an empty bucket takes to fill up ({@code burst} tokens).
	 * @return nanoseconds
	 */
	public long toleranceNanos() {
		return this.toleranceNanos;
	}

	/**
	 * Returns how long a key's state may sit untouched before it is surely equal to a fresh state, so
	 * that a store can forget it without changing any decision: a bucket's time to refill (or drain)
	 * the whole burst, one period for a fixed window or a log, two periods for the window counter
	 * (the current window still weighs on the next); never for a concurrency limit ({@link Long#MAX_VALUE}).
	 * @return nanoseconds
	 */
	public long idleNanosUntilFresh() {
		return switch (this.algorithm) {
			case TOKEN_BUCKET, LEAKY_BUCKET -> this.toleranceNanos;
			case FIXED_WINDOW, SLIDING_WINDOW_LOG -> this.period.toNanos();
			case SLIDING_WINDOW_COUNTER -> 2 * this.period.toNanos();
			// Fresh when nothing is in flight, which no time of idleness implies: stores drop a key when
			// its last request ends, never by age.
			case CONCURRENCY -> Long.MAX_VALUE;
		};
	}

	/**
	 * Creates the state of a key that has not been seen yet.
	 * @return a fresh state, enforcing this limit
	 */
	LimiterState newState() {
		return switch (this.algorithm) {
			case TOKEN_BUCKET -> new TokenBucket(this);
			case LEAKY_BUCKET -> new LeakyBucket(this);
			case FIXED_WINDOW -> new FixedWindow(this);
			case SLIDING_WINDOW_LOG -> new SlidingWindowLog(this);
			case SLIDING_WINDOW_COUNTER -> new SlidingWindowCounter(this);
			case CONCURRENCY -> new ConcurrencyState(this);
		};
	}

	@Override
	public boolean equals(Object other) {
		return this == other || (other instanceof Limit that) && this.algorithm == that.algorithm && this.limit == that.limit
				&& this.period.equals(that.period) && this.burst == that.burst;
	}

	@Override
	public int hashCode() {
		return Objects.hash(this.algorithm, this.limit, this.period, this.burst);
	}

	@Override
	public String toString() {
		return this.algorithm + "(limit=" + this.limit + ", period=" + this.period + ", burst=" + this.burst + ")";
	}

	/**
	 * Builds a {@link Limit}, validating every value. Not thread-safe.
	 */
	public static final class Builder {

		private Algorithm algorithm = Algorithm.TOKEN_BUCKET;

		private long limit;

		private Duration period = Duration.ZERO;

		private Long burst;

		private Builder() {
		}

		/**
		 * Sets the algorithm ({@link Algorithm#TOKEN_BUCKET} when not called).
		 * @param algorithm the algorithm
		 * @return this builder
		 */
		public Builder algorithm(Algorithm algorithm) {
			this.algorithm = Objects.requireNonNull(algorithm, "algorithm");
			return this;
		}

		/**
		 * Sets the quota per period.
		 * @param limit requests (tokens) per period; must be positive
		 * @return this builder
		 */
		public Builder limit(long limit) {
			this.limit = limit;
			return this;
		}

		/**
		 * Sets the period (not for {@link Algorithm#CONCURRENCY}, which has none).
		 * @param period must be positive
		 * @return this builder
		 */
		public Builder period(Duration period) {
			this.period = Objects.requireNonNull(period, "period");
			return this;
		}

		/**
		 * Sets the capacity (the limit when not called).
		 * @param burst must be positive
		 * @return this builder
		 */
		public Builder burst(long burst) {
			this.burst = burst;
			return this;
		}

		/**
		 * Builds the limit.
		 * @return the limit
		 * @throws InvalidValueException saying which value is wrong, why, and what to do
		 */
		public Limit build() {
			if (this.limit <= 0) {
				throw new InvalidValueException("limit", "limit must be positive, was " + this.limit,
						"Set a positive number of requests per period");
			}
			if (this.algorithm == Algorithm.CONCURRENCY) {
				return buildConcurrency();
			}
			if (this.period.isNegative() || this.period.isZero()) {
				throw new InvalidValueException("period", "period must be positive, was " + this.period,
						"Set a positive duration such as 1s, 1m or 1h");
			}
			if (this.period.compareTo(Duration.ofDays(365 * 100L)) > 0) {
				throw new InvalidValueException("period", "period must be at most 100 years, was " + this.period, "Shorten the period");
			}
			if (this.burst != null && this.burst <= 0) {
				throw new InvalidValueException("burst", "burst must be positive, was " + this.burst,
						"Set a positive burst or leave it unset (it defaults to the limit)");
			}
			if (this.burst != null && !this.algorithm.hasBurst() && this.burst != this.limit) {
				throw new InvalidValueException("burst", "burst does not apply to " + this.algorithm + " (a window holds its limit)",
						"Leave burst unset, or use token-bucket or leaky-bucket");
			}
			if (this.algorithm == Algorithm.SLIDING_WINDOW_LOG && this.limit > MAX_LOG_LIMIT) {
				throw new InvalidValueException("limit", "sliding-window-log keeps one timestamp (8 bytes) per request of the "
						+ "window, per key: a limit of " + this.limit + " could take " + (this.limit * 8 / 1024)
						+ " KiB per key; the most it accepts is " + MAX_LOG_LIMIT,
						"Use sliding-window-counter (16 bytes per key) for large limits");
			}
			if (this.algorithm == Algorithm.SLIDING_WINDOW_COUNTER && (Math.multiplyHigh(this.limit, this.period.toNanos()) != 0
					|| this.limit * this.period.toNanos() > MAX_COUNTER_PRODUCT)) {
				throw new InvalidValueException("limit", "sliding-window-counter computes exactly with limit x period in "
						+ "nanoseconds, which must stay below 2^61; " + this.limit + " per " + this.period
						+ " is too large", "Shorten the period or lower the limit");
			}
			if (this.limit > MAX_HEADER_INTEGER || (this.burst != null && this.burst > MAX_HEADER_INTEGER)) {
				// The RateLimit headers carry it as a structured-field integer, at most 15 digits: a larger one
				// would make clients drop the whole header, every policy's.
				String field = (this.limit > MAX_HEADER_INTEGER) ? "limit" : "burst";
				throw new InvalidValueException(field, field + " must be at most 999,999,999,999,999 (15 digits, what the RateLimit "
						+ "headers can carry), was " + ((this.limit > MAX_HEADER_INTEGER) ? this.limit : this.burst),
						"Lower it; for no limit at all, exempt the requests instead");
			}
			if (this.limit > this.period.toNanos()) {
				throw new InvalidValueException("limit", "limit must be at most one per nanosecond of period, was "
						+ this.limit + " per " + this.period, "Lower the limit or lengthen the period");
			}
			long burst = (this.burst != null) ? this.burst : this.limit;
			long interval = -Math.floorDiv(-this.period.toNanos(), this.limit);
			if (Math.multiplyHigh(interval, burst) != 0 || interval * burst < 0
					|| interval * burst > Duration.ofDays(365 * 100L).toNanos()) {
				throw new InvalidValueException("burst", "burst " + burst + " takes longer than 100 years to refill at "
						+ this.limit + " per " + this.period, "Lower the burst");
			}
			return new Limit(this);
		}

		private Limit buildConcurrency() {
			if (!this.period.isZero()) {
				throw new InvalidValueException("period", "period does not apply to concurrency, which limits requests in flight, "
						+ "not per period", "Leave period unset");
			}
			if (this.burst != null && this.burst != this.limit) {
				throw new InvalidValueException("burst", "burst does not apply to concurrency", "Leave burst unset");
			}
			if (this.limit > MAX_CONCURRENCY_LIMIT) {
				throw new InvalidValueException("limit", "a concurrency limit holds one slot per request in flight; " + this.limit
						+ " per key is more than the " + MAX_CONCURRENCY_LIMIT + " it accepts",
						"Lower the limit to at most " + MAX_CONCURRENCY_LIMIT);
			}
			this.period = CONCURRENCY_PERIOD;
			return new Limit(this);
		}
	}
}
