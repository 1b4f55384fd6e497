package io.github.ratelimit.web;

/**
 * Holds a delayed request (delay mode) until its turn. The default sleeps the request's thread, which
 * blocks nothing else: no lock is held, other keys and other requests of the same key go on. Each
 * waiting request does occupy its servlet thread for up to {@code max-delay}; with virtual threads
 * ({@code spring.threads.virtual.enabled=true}) a wait costs no platform thread. Implementations must
 * be thread-safe; tests replace it to move a fake clock instead of sleeping.
 */
@FunctionalInterface
public interface RequestDelay {

	/** Sleeps the calling thread. */
	RequestDelay SLEEP = (nanos) -> Thread.sleep(nanos / 1_000_000, (int) (nanos % 1_000_000));

	/**
	 * Waits.
	 * @param nanos how long, positive
	 * @throws InterruptedException when the thread is interrupted while waiting
	 */
	void await(long nanos) throws InterruptedException;
}
