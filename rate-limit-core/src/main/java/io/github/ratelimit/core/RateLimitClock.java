package io.github.ratelimit.core;

/**
 * The time source of limiters and stores: nanoseconds since the Unix epoch, never going backwards.
 * <p>
 * Epoch-based so that window boundaries agree between instances; monotonic so that a wall-clock
 * step (NTP) cannot refill or drain a bucket. Tests inject a clock they advance instead of sleeping
 * ({@code ManualClock} of the rate-limit-test artifact). Implementations must be thread-safe.
 */
@FunctionalInterface
public interface RateLimitClock {

	/** The system clock: anchored to the wall clock once, then advanced by {@link System#nanoTime()}. */
	RateLimitClock SYSTEM = new RateLimitClock() {
		private final long offset = System.currentTimeMillis() * 1_000_000L - System.nanoTime();

		@Override
		public long nanos() {
			return this.offset + System.nanoTime();
		}
	};

	/**
	 * Returns the current time.
	 * @return nanoseconds since 1970-01-01T00:00:00Z
	 */
	long nanos();
}
