package io.github.ratelimit.testsupport;

import java.util.concurrent.atomic.AtomicBoolean;

import reactor.blockhound.BlockHound;
import reactor.blockhound.BlockingOperationError;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Installs BlockHound, once per test JVM: a blocking call on a thread that must not block (Reactor Netty's
 * event loops, Reactor's parallel scheduler, which runs the delay timers) throws there, and the request
 * fails, so that the reactive tests fail. Each call allowed is listed with its reason.
 */
public final class NonBlocking {

	private static final AtomicBoolean INSTALLED = new AtomicBoolean();

	private NonBlocking() {
	}

	/**
	 * Installs BlockHound, unless it is already, and checks that it watches.
	 */
	public static void install() {
		if (INSTALLED.compareAndSet(false, true)) {
			// With the integrations on the class path (Reactor's, Netty's), which mark their threads as non-blocking.
			BlockHound.install((builder) -> builder
				// Netty's pooling allocator locks briefly while it grows its magazines, under contention: no I/O.
				.allowBlockingCallsInside("io.netty.buffer.AdaptivePoolingAllocator$MagazineGroup", "tryExpandMagazines")
				.allowBlockingCallsInside("io.netty.buffer.AdaptivePoolingAllocator$Magazine", "free")
				// Handing a task to a pool (the Redis store's calls on Jedis): its locks are held only to queue the
				// task or add a worker, as Reactor's own integration allows for ScheduledThreadPoolExecutor's queue.
				.allowBlockingCallsInside("java.util.concurrent.ThreadPoolExecutor", "execute"));
			// The proof that it watches: a sleep on a non-blocking thread fails.
			try {
				Mono.fromCallable(() -> {
					Thread.sleep(1);
					return true;
				}).subscribeOn(Schedulers.parallel()).block();
			}
			catch (RuntimeException ex) {
				if (ex.getCause() instanceof BlockingOperationError) {
					return;
				}
				throw ex;
			}
			throw new IllegalStateException("BlockHound is installed but does not watch Reactor's threads");
		}
	}

}
