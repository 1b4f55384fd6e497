package io.github.ratelimit.benchmarks.peers;

import java.time.Duration;
import java.util.Locale;

import io.github.bucket4j.Bandwidth;

import io.github.ratelimit.core.Limit;

/**
 * The two budgets the decision benchmarks run under, stated once for every implementation.
 */
public enum Policy {

	/**
	 * So generous that every request is allowed: 10^8 tokens a second (one per 10 ns, more than any
	 * key gets here) and room for an hour of them, so that a key is forgotten only after an idle hour
	 * (a shorter budget would let keys expire between two visits in a slow iteration, and the benchmark
	 * would measure key creation). Bucket4j's refill arithmetic stays within a {@code long} for idle
	 * times up to 90 s.
	 */
	ALLOWED(100_000_000L, Duration.ofSeconds(1), 360_000_000_000L),

	/** One request an hour: after the first request of a key (made during set-up), all are rejected. */
	REJECTED(1, Duration.ofHours(1), 1);

	private final long limit;

	private final Duration period;

	private final long burst;

	Policy(long limit, Duration period, long burst) {
		this.limit = limit;
		this.period = period;
		this.burst = burst;
	}

	/**
	 * Finds a policy by its JMH parameter value.
	 * @param name {@code allowed} or {@code rejected}
	 * @return the policy
	 */
	public static Policy of(String name) {
		return valueOf(name.toUpperCase(Locale.ROOT));
	}

	/**
	 * Returns the budget as our limiter states it.
	 * @return the limit
	 */
	public Limit limit() {
		return Limit.builder().limit(this.limit).period(this.period).burst(this.burst).build();
	}

	/**
	 * Returns the same budget as Bucket4j states it: capacity = burst, {@code limit} tokens refilled
	 * greedily (continuously) over the period.
	 * @return the bandwidth
	 */
	public Bandwidth bandwidth() {
		return Bandwidth.builder().capacity(this.burst).refillGreedy(this.limit, this.period).build();
	}

	/**
	 * Returns how long a key may sit idle before its state is as good as new: the time to refill the
	 * burst plus a second, as our store computes it; the peers' maps get the same expiry.
	 * @return the idle time
	 */
	public Duration idleExpiry() {
		return Duration.ofNanos(limit().toleranceNanos()).plusSeconds(1);
	}
}
