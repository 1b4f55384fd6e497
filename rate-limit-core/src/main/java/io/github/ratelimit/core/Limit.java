package io.github.ratelimit.core;

import java.time.Duration;
import java.util.Objects;

/**
 * What one limit allows: {@code limit} requests (tokens) per {@code period}, with room for a burst of
 * {@code burst}, decided by an {@link Algorithm}. Immutable and thread-safe; built with
 * {@link #builder()}, which refuses values that cannot work.
 */
public final class Limit {

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
	 * @return the period, positive
	 */
	public Duration period() {
		return this.period;
	}

	/**
	 * Returns the capacity: the most tokens that may be spent at once.
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
	 * that a store can forget it without changing any decision.
	 * @return nanoseconds
	 */
	public long idleNanosUntilFresh() {
		return this.toleranceNanos;
	}

	/**
	 * Creates the state of a key that has not been seen yet.
	 * @return a fresh state, enforcing this limit
	 */
	public LimiterState newState() {
		return switch (this.algorithm) {
			case TOKEN_BUCKET -> new TokenBucket(this);
		};
	}

	@Override
	public boolean equals(Object other) {
		return (other instanceof Limit that) && this.algorithm == that.algorithm && this.limit == that.limit
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
		 * Sets the period.
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
		 * @throws IllegalArgumentException saying which value is wrong and why
		 */
		public Limit build() {
			if (this.limit <= 0) {
				throw new IllegalArgumentException("limit must be positive, was " + this.limit);
			}
			if (this.period.isNegative() || this.period.isZero()) {
				throw new IllegalArgumentException("period must be positive, was " + this.period);
			}
			if (this.period.compareTo(Duration.ofDays(365 * 100L)) > 0) {
				throw new IllegalArgumentException("period must be at most 100 years, was " + this.period);
			}
			if (this.burst != null && this.burst <= 0) {
				throw new IllegalArgumentException("burst must be positive, was " + this.burst);
			}
			if (this.limit > this.period.toNanos()) {
				throw new IllegalArgumentException("limit must be at most one per nanosecond of period, was "
						+ this.limit + " per " + this.period);
			}
			long burst = (this.burst != null) ? this.burst : this.limit;
			long interval = -Math.floorDiv(-this.period.toNanos(), this.limit);
			if (Math.multiplyHigh(interval, burst) != 0 || interval * burst < 0
					|| interval * burst > Duration.ofDays(365 * 100L).toNanos()) {
				throw new IllegalArgumentException("burst " + burst + " takes longer than 100 years to refill at "
						+ this.limit + " per " + this.period + "; lower the burst");
			}
			return new Limit(this);
		}
	}
}
