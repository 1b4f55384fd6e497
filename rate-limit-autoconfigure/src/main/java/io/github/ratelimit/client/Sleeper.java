package io.github.ratelimit.client;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * How the {@link RetryAfterInterceptor} waits between attempts. Tests inject a fake that records
 * the requested waits instead of sleeping. Implementations must be thread-safe.
 */
@FunctionalInterface
public interface Sleeper {

	/**
	 * Blocks the calling thread with {@link TimeUnit#sleep(long)}; an interrupted thread does not
	 * wait, not even for a zero duration.
	 */
	Sleeper SYSTEM = (duration) -> {
		if (Thread.interrupted()) {
			throw new InterruptedException();
		}
		// convert saturates: a duration beyond Long.MAX_VALUE nanoseconds sleeps that long.
		TimeUnit.NANOSECONDS.sleep(TimeUnit.NANOSECONDS.convert(duration));
	};

	/**
	 * Waits for the given time.
	 * @param duration how long to wait, never negative and never longer than the interceptor's
	 * total wait budget
	 * @throws InterruptedException when the thread is interrupted while waiting
	 */
	void sleep(Duration duration) throws InterruptedException;

}
