package io.github.ratelimit.web;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The timer of delayed requests (delay mode): resumes a request once its turn comes. A waiting request
 * holds no thread: it is parked with the Servlet async API, and the timer dispatches it again when its
 * wait is over. Only a request that cannot go async (its servlet does not support it, or MockMvc, which
 * has no container to dispatch it again) waits on its thread, through {@link #await}. Implementations must
 * be thread-safe and return at once; tests replace it to run the resumptions themselves instead of
 * waiting on the wall clock.
 */
@FunctionalInterface
public interface RequestDelay {

	/**
	 * The default: the JDK's shared delay scheduler hands each resumption to the common pool when its wait
	 * is over.
	 */
	RequestDelay TIMER = (nanos, resume) -> CompletableFuture.delayedExecutor(nanos, TimeUnit.NANOSECONDS)
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
