package io.github.ratelimit.web;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The timer of delayed requests (delay mode): resumes a request once its turn comes. By default a waiting
 * request waits on its thread ({@link #await}); with {@code rate-limit.delay.park=true} it is parked with
 * the Servlet async API and holds no thread, and the timer dispatches it again when its wait is over.
 * Implementations must be thread-safe and return at once; tests replace it to run the resumptions
 * themselves instead of waiting on the wall clock.
 */
@FunctionalInterface
public interface RequestDelay {

	/**
	 * The default: the JDK's shared delay scheduler runs each resumption on its own thread when its wait is
	 * over (a resumption is quick: it dispatches a request, or wakes a waiting thread).
	 */
	RequestDelay TIMER = (nanos, resume) -> CompletableFuture
		.delayedExecutor(nanos, TimeUnit.NANOSECONDS, Runnable::run)
		.execute(resume);

	/**
	 * Runs {@code resume} once {@code nanos} have passed, on another thread (or on this one, at once, when
	 * a test says the wait is over), and returns without waiting.
	 * @param nanos how long, positive
	 * @param resume what resumes the request: quick, never blocks
	 */
	void schedule(long nanos, Runnable resume);

	/**
	 * Waits on the calling thread, for a request that cannot wait without it.
	 * @param nanos how long, positive
	 * @throws InterruptedException when the thread is interrupted while waiting
	 */
	default void await(long nanos) throws InterruptedException {
		CountDownLatch over = new CountDownLatch(1);
		schedule(nanos, over::countDown);
		over.await();
	}

}
