package io.github.ratelimit.redis;

import java.util.concurrent.atomic.AtomicReference;

/**
 * What this process knows of one Redis node's clock, learned from the times its scripts read:
 * a script that read server time {@code s} ran between the call's send ({@code t0}, local) and its
 * reply ({@code t1}), so {@code s - t1 <= offset <= s - t0}, where offset is server time minus local
 * time. The store keeps the narrowest such interval (replaced when older than {@value #MAX_AGE_SECONDS}
 * s, so that clock drift stays below a millisecond at ordinary crystal error) and turns its lower end
 * into a deadline a script can check in server time: {@code giveUp + low} is never later, in server
 * time, than the instant the client gave up.
 * <p>
 * Local time is {@link System#nanoTime()} in microseconds: monotonic, and only ever compared with
 * itself. Thread-safe: samples are immutable values swapped atomically.
 */
final class ServerClock {

	static final long NONE = Long.MIN_VALUE;

	private static final int MAX_AGE_SECONDS = 10;

	private static final long MAX_AGE_NANOS = MAX_AGE_SECONDS * 1_000_000_000L;

	private record Sample(long low, long high, long atNanos) {
	}

	private final AtomicReference<Sample> best = new AtomicReference<>();

	/**
	 * Records what one reply taught.
	 * @param sentNanos {@link System#nanoTime()} before the call was sent
	 * @param receivedNanos {@link System#nanoTime()} after its reply came
	 * @param serverMicros the server time the script read, epoch microseconds
	 */
	void record(long sentNanos, long receivedNanos, long serverMicros) {
		Sample sample = new Sample(serverMicros - Math.floorDiv(receivedNanos, 1000) - 1,
				serverMicros - Math.floorDiv(sentNanos, 1000), receivedNanos);
		Sample current = this.best.get();
		while (current == null || sample.high() - sample.low() <= current.high() - current.low()
				|| receivedNanos - current.atNanos() > MAX_AGE_NANOS) {
			if (this.best.compareAndSet(current, sample)) {
				return;
			}
			current = this.best.get();
		}
	}

	/**
	 * Converts a local give-up time into a deadline in the server's time.
	 * @param giveUpNanos a {@link System#nanoTime()} value
	 * @return epoch microseconds of the server no later than the give-up, or {@link #NONE} before the first
	 * reply
	 */
	long deadlineMicros(long giveUpNanos) {
		Sample current = this.best.get();
		return (current != null) ? Math.floorDiv(giveUpNanos, 1000) + current.low() : NONE;
	}
}
