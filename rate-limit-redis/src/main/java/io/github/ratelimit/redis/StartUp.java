package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.Limit;
import io.github.ratelimit.core.Receipt;

/**
 * The store's start-up: one call in the background that connects and runs a script reading (not changing)
 * one key, so that wrong credentials, a missing permission or an unreachable Redis are logged before any
 * request (and, with fail-fast, fail the build); then the warm-up of the decision path
 * ({@link RedisRateLimitStore#warmUp(Duration)}). Thread-safe.
 */
final class StartUp {

	/** How long start-up waits for the first answer: wrong credentials and a refused connection take milliseconds. */
	private static final Duration START_UP_CHECK = Duration.ofSeconds(1);

	/** How long start-up waits for the first answer with fail-fast: longer than a connect timeout on a slow network. */
	private static final Duration FAIL_FAST_CHECK = Duration.ofSeconds(10);

	/** The start-up check's attempts at most, when the connection fails before Redis answers. */
	private static final int STARTUP_ATTEMPTS = 3;

	/** The pause between two attempts of the start-up check. */
	private static final Duration STARTUP_RETRY = Duration.ofMillis(100);

	/** Threads of the warm-up: more than one, so that coalescing batches. */
	private static final int WARM_UP_THREADS = 4;

	/** Rounds per warm-up thread at most: past C2's compile thresholds for the decision path's methods. */
	private static final int WARM_UP_ROUNDS = 2_500;

	/** Keys of the warm-up's throwaway limit. */
	private static final int WARM_UP_KEYS = 64;

	private final String endpoint;

	private final boolean failFast;

	private final String onFailure;

	private final long timeoutNanos;

	private final CompletableFuture<@Nullable RedisError> check = new CompletableFuture<>();

	/** Whether Redis answered the start-up check, also after the start-up stopped waiting for it (late). */
	private final CompletableFuture<Boolean> answered = new CompletableFuture<>();

	StartUp(RedisSettings settings, ScriptRunner runner, ScriptCodec codec, RedisNodes nodes, String onFailure) {
		this.endpoint = settings.endpoint();
		this.failFast = settings.failFast;
		this.onFailure = onFailure;
		this.timeoutNanos = settings.timeoutNanos();
		List<Acquisition> probe = List.of(new Acquisition("start-up-check",
				Limit.builder().limit(1).period(Duration.ofSeconds(1)).build(), "", 1));
		byte[][] keys = codec.keys(probe);
		ScriptCodec.Call call = codec.call(ScriptOp.PEEK, probe, keys, ScriptCodec.NO_DEADLINE, null);
		ScriptRunner.daemon(() -> check(runner, call, nodes), "rate-limit-redis-start-up-check").start();
	}

	/**
	 * Runs the check, tried twice more when the connection was lost while it was being set up (the client
	 * reports no answer of Redis' own), so that a refused password is reported as such rather than as an
	 * outage. A Redis that only answers slower than the start-up waits (a first connection on a busy
	 * machine) is given the fail-fast check's time before it is reported as not answering.
	 */
	private void check(ScriptRunner runner, ScriptCodec.Call call, RedisNodes nodes) {
		long start = System.nanoTime();
		long deadline = start + (this.failFast ? FAIL_FAST_CHECK : START_UP_CHECK).toNanos();
		boolean late = false;
		for (int attempt = 1;; attempt++) {
			long sent = System.nanoTime();
			try {
				ReplyPart reply = ReplyPart.of(runner.run(call.script(), call.keys(), call.args(), deadline));
				// The node once connected: on a cluster, the key's master is known only then.
				nodes.clock.learn(nodes.node(call.keys()[0]), sent, reply);
				if (late) {
					RedisRateLimitStore.logger.info("Redis at " + this.endpoint + " answered the rate limiter's start-up check after "
							+ TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start) + " ms");
				}
				this.check.complete(null);
				this.answered.complete(true);
				return;
			}
			catch (Exception ex) {
				RedisError error = RedisError.of(ex);
				boolean timeout = "TIMEOUT".equals(error.code());
				if (!late && !this.failFast && timeout) {
					// Slow, not refused: the start-up goes on (on-failure decides meanwhile), and this
					// thread waits as long as fail-fast would before it reports an outage.
					late = true;
					this.check.complete(error);
					deadline = System.nanoTime() + FAIL_FAST_CHECK.toNanos();
					continue;
				}
				if (error.kind() != RedisError.Kind.UNREACHABLE || timeout || attempt >= STARTUP_ATTEMPTS
						|| deadline - System.nanoTime() < STARTUP_RETRY.toNanos() * 2) {
					failed(error, late);
					return;
				}
				// An interrupt ends the pause, and the check's next attempts at once.
				LockSupport.parkNanos(STARTUP_RETRY.toNanos());
			}
		}
	}

	private void failed(RedisError error, boolean late) {
		if (error.isCredentials()) {
			RedisRateLimitStore.logger.error("Redis at " + this.endpoint
					+ " refused the rate limiter's credentials or permissions at start-up (" + error.message() + "): "
					+ RedisNodes.CREDENTIALS_ACTION + ". Until then on-failure=" + this.onFailure + " decides every request");
		}
		else {
			RedisRateLimitStore.logger.warn("Redis at " + this.endpoint + " did not answer the rate limiter at start-up (" + error.message()
					+ (late ? ", for " + FAIL_FAST_CHECK.toSeconds() + " s" : "") + "); until it does, on-failure="
					+ this.onFailure + " decides. rate-limit.store.redis.fail-fast=true fails the start-up instead");
		}
		this.check.complete(error);
		this.answered.complete(false);
	}

	/**
	 * Waits for the start-up check (at most a second; ten with fail-fast).
	 * @throws IllegalStateException with fail-fast, when Redis refused or did not answer
	 */
	void await() {
		RedisError error;
		try {
			error = this.check.get((this.failFast ? FAIL_FAST_CHECK : START_UP_CHECK).toMillis() + 500, TimeUnit.MILLISECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return;
		}
		catch (ExecutionException | TimeoutException ex) {
			error = new RedisError(RedisError.Kind.UNREACHABLE, "TIMEOUT", "no answer in " + FAIL_FAST_CHECK.toSeconds() + " s");
		}
		if (error != null && this.failFast) {
			throw new IllegalStateException("Redis at " + this.endpoint
					+ (error.isCredentials() ? " refused the rate limiter's credentials (" + error.message() + "); "
							+ RedisNodes.CREDENTIALS_ACTION
							: " did not answer the rate limiter (" + error.message() + "); start Redis or correct "
									+ "spring.data.redis.host, port or cluster.nodes"));
		}
	}

	/**
	 * Warms the decision path (see {@link RedisRateLimitStore#warmUp(Duration)}) on throwaway keys of a limit
	 * id of this instance's own.
	 */
	int warmUp(RedisRateLimitStore store, Duration budget) {
		if (budget.isNegative() || budget.isZero()) {
			return 0;
		}
		long end = System.nanoTime() + budget.toNanos();
		try {
			// A first connection of a cold JVM may take longer than the start-up waited: within the budget, wait for it.
			if (!this.answered.get(budget.toNanos(), TimeUnit.NANOSECONDS)) {
				return 0;
			}
		}
		catch (TimeoutException | ExecutionException ex) {
			return 0;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return 0;
		}
		long fallbacksBefore = store.fallbacks();
		String limitId = "warm-up." + store.leases.prefix + Long.toString(System.nanoTime() & 0xffffff, 36);
		Limit limit = Limit.builder().limit(1_000_000).period(Duration.ofSeconds(1)).build();
		AtomicInteger answered = new AtomicInteger();
		Runnable rounds = () -> {
			for (int round = 0; round < WARM_UP_ROUNDS && System.nanoTime() - end < 0 && store.fallbacks() == fallbacksBefore;
					round++) {
				Acquisition acquisition = new Acquisition(limitId, limit, "k" + (round % WARM_UP_KEYS), 1);
				store.tryAcquire(acquisition);
				Receipt receipt = store.admitAll(List.of(acquisition)).get(0);
				if (store.fallbacks() != fallbacksBefore) {
					return;
				}
				answered.addAndGet(2);
				if (receipt.mirror() != null) {
					store.fallback.localStore.giveBack(receipt.mirror());
				}
				// 0: Redis answered that nothing is held any more (the bucket refilled within microseconds); -1: no answer.
				if (store.giveBacks.inRedis(receipt).join() >= 0) {
					answered.incrementAndGet();
				}
			}
		};
		List<Thread> threads = new ArrayList<>(WARM_UP_THREADS);
		for (int i = 0; i < WARM_UP_THREADS; i++) {
			threads.add(ScriptRunner.daemon(rounds, "rate-limit-redis-warm-up-" + i));
			threads.get(i).start();
		}
		try {
			for (Thread thread : threads) {
				// Each call waits at most the timeout, a give-back too: a round ends soon after the budget.
				thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime() + 3 * this.timeoutNanos)));
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		for (int i = 0; i < WARM_UP_KEYS && store.fallbacks() == fallbacksBefore; i++) {
			try {
				store.reset(limitId, "k" + i);
			}
			catch (RuntimeException ex) {
				// expires within milliseconds anyway
				break;
			}
		}
		return answered.get();
	}
}
