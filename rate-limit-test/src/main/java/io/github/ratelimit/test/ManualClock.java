package io.github.ratelimit.test;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import io.github.ratelimit.core.RateLimitClock;

/**
 * A clock that moves only when told to, for tests: declare it as the application's
 * {@link RateLimitClock} bean (or pass it to a store) and {@link #advance(Duration) advance} it instead
 * of sleeping. It drives the in-process store and the limiters; the Redis store reads the Redis
 * server's clock ({@code TIME}) and is not driven by it. Thread-safe.
 */
public final class ManualClock implements RateLimitClock {

	private final AtomicLong nanos;

	/** Creates a clock at an arbitrary, realistic instant (2026-01-01T00:00:00Z). */
	public ManualClock() {
		this(1_767_225_600_000_000_000L);
	}

	/**
	 * Creates a clock at the given instant.
	 * @param epochNanos nanoseconds since the epoch
	 */
	public ManualClock(long epochNanos) {
		this.nanos = new AtomicLong(epochNanos);
	}

	@Override
	public long nanos() {
		return this.nanos.get();
	}

	/**
	 * Moves the clock forward.
	 * @param duration how far; must not be negative
	 */
	public void advance(Duration duration) {
		advanceNanos(duration.toNanos());
	}

	/**
	 * Moves the clock forward.
	 * @param nanos how far, in nanoseconds; must not be negative
	 */
	public void advanceNanos(long nanos) {
		if (nanos < 0) {
			throw new IllegalArgumentException("A clock cannot go backwards: " + nanos + "ns");
		}
		this.nanos.addAndGet(nanos);
	}
}
