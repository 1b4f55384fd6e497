package io.github.ratelimit.redis;

import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.ReturnType;

/**
 * Runs scripts through any {@link RedisConnectionFactory} (Jedis, or another client), whose calls
 * block: each call runs on a bounded pool, never on the caller's thread. A call that finds the pool full
 * fails at once rather than queue behind a stuck Redis. Thread-safe.
 */
final class ConnectionScriptRunner implements ScriptRunner {

	private final RedisConnectionFactory factory;

	private final ThreadPoolExecutor executor;

	ConnectionScriptRunner(RedisConnectionFactory factory, int threads) {
		this.factory = factory;
		AtomicInteger count = new AtomicInteger();
		this.executor = new ThreadPoolExecutor(threads, threads, 60, TimeUnit.SECONDS,
				new ArrayBlockingQueue<>(threads * 16),
				(runnable) -> ScriptRunner.daemon(runnable, "rate-limit-redis-" + count.incrementAndGet()));
		this.executor.allowCoreThreadTimeOut(true);
	}

	@Override
	public CompletableFuture<List<Long>> call(LuaScript script, byte[][] keys, byte[][] args, long deadline) {
		byte[][] keysAndArgs = Arrays.copyOf(keys, keys.length + args.length);
		System.arraycopy(args, 0, keysAndArgs, keys.length, args.length);
		try {
			return CompletableFuture.supplyAsync(() -> {
				if (deadline - System.nanoTime() <= 0) {
					// Queued until after its caller gave up: never sent, so that it takes nothing nobody waits for.
					throw new CompletionException(new TimeoutException("Redis did not answer in time"));
				}
				return ScriptRunner.integers(call(script, keys.length, keysAndArgs));
			}, this.executor);
		}
		catch (RejectedExecutionException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	@Override
	public void warmUp(Collection<LuaScript> scripts) {
		try {
			// A failure is left in the future: the first calls connect and load.
			CompletableFuture.runAsync(() -> {
				try (RedisConnection connection = this.factory.getConnection()) {
					scripts.forEach((script) -> connection.scriptingCommands().scriptLoad(script.source()));
				}
			}, this.executor);
		}
		catch (RuntimeException ex) {
			// the first calls connect and load
		}
	}

	private Object call(LuaScript script, int numKeys, byte[][] keysAndArgs) {
		try (RedisConnection connection = this.factory.getConnection()) {
			try {
				return connection.scriptingCommands().evalSha(script.sha1(), ReturnType.MULTI, numKeys, keysAndArgs);
			}
			catch (RuntimeException ex) {
				if (!ScriptRunner.isNoScript(ex)) {
					throw ex;
				}
				return connection.scriptingCommands().eval(script.source(), ReturnType.MULTI, numKeys, keysAndArgs);
			}
		}
	}

	@Override
	public void close() {
		this.executor.shutdownNow();
	}
}
