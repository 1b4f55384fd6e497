package io.github.ratelimit.redis;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Bounds the store's calls in time without blocking whoever asks, on a timer thread of the store's own. Not
 * {@code CompletableFuture.orTimeout}: on Java 25 its timer is the common pool's delay scheduler, which
 * spins on its state lock when a task is added, on the event loop that asks; this timer's queue takes a
 * lock held only to add or take a task. A timeout that did not fire is cancelled, not removed (removal takes
 * the lock again on the thread that completes): the timer holds it until its time, so at most the calls of
 * one timeout's worth. Thread-safe.
 */
final class Timeouts implements AutoCloseable {

	private final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1,
			(runnable) -> ScriptRunner.daemon(runnable, "rate-limit-redis-timeout"));

	Timeouts() {
		// Its thread started now, not by the first timeout, on a thread that must not wait for a lock.
		this.timer.prestartAllCoreThreads();
	}

	/**
	 * Fails a future with a {@link TimeoutException} unless it completes within a time.
	 * @param future the future, completed by this timer when late
	 * @param nanos the time it has
	 * @param <T> its value
	 * @return the future
	 */
	<T> CompletableFuture<T> orTimeout(CompletableFuture<T> future, long nanos) {
		return within(future, nanos, () -> future.completeExceptionally(new TimeoutException("Redis did not answer in time")));
	}

	/**
	 * Completes a future with a value unless it completes within a time.
	 * @param future the future, completed by this timer when late
	 * @param value its value then
	 * @param nanos the time it has
	 * @param <T> its value
	 * @return the future
	 */
	<T> CompletableFuture<T> completeOnTimeout(CompletableFuture<T> future, T value, long nanos) {
		return within(future, nanos, () -> future.complete(value));
	}

	private <T> CompletableFuture<T> within(CompletableFuture<T> future, long nanos, Runnable late) {
		if (future.isDone()) {
			return future;
		}
		if (nanos <= 0) {
			late.run();
			return future;
		}
		try {
			ScheduledFuture<?> timeout = this.timer.schedule(late, nanos, TimeUnit.NANOSECONDS);
			future.whenComplete((value, failure) -> timeout.cancel(false));
		}
		catch (RejectedExecutionException ex) {
			// Closed: no call waits any longer.
			late.run();
		}
		return future;
	}

	@Override
	public void close() {
		this.timer.shutdownNow();
	}

}
