package io.github.ratelimit.core;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A clock that moves only when told to, for this module's tests. Thread-safe. A copy of
 * {@code io.github.ratelimit.test.ManualClock} (rate-limit-test, which depends on this module: the
 * reactor allows no cycle).
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
