package io.github.ratelimit.redis;

import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

import io.lettuce.core.RedisFuture;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.async.RedisAdvancedClusterAsyncCommands;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.lettuce.LettuceConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Runs scripts on Lettuce's asynchronous API, on the connection the factory shares (or one dedicated
 * connection when the factory shares none), never blocking the caller. Connecting happens on a background
 * thread, so even the first decision after start-up, with Redis away, waits no longer than its deadline.
 * Thread-safe.
 */
final class LettuceScriptRunner implements ScriptRunner {

	private final LettuceConnectionFactory factory;

	private final ExecutorService connector = Executors
		.newSingleThreadExecutor((runnable) -> ScriptRunner.daemon(runnable, "rate-limit-redis-connect"));

	private final AtomicReference<@Nullable CompletableFuture<Connection>> connection = new AtomicReference<>();

	LettuceScriptRunner(LettuceConnectionFactory factory) {
		this.factory = factory;
	}

	@Override
	public CompletableFuture<List<Long>> call(LuaScript script, byte[][] keys, byte[][] args, long deadline) {
		CompletableFuture<List<Long>> sent = send(script, keys, args);
		if (sent != null) {
			return sent;
		}
		CompletableFuture<List<Long>> result = new CompletableFuture<>();
		connection().whenComplete((connection, failure) -> {
			if (failure != null) {
				result.completeExceptionally((failure instanceof CompletionException) ? failure.getCause() : failure);
			}
			else if (deadline - System.nanoTime() <= 0) {
				// Connected after its caller gave up: never sent, so that it takes nothing nobody waits for.
				result.completeExceptionally(new TimeoutException("Redis was not connected in time"));
			}
			else if (!result.isDone()) {
				send(connection.commands(), script, keys, args, result);
			}
		});
		return result;
	}

	@Override
	public void warmUp(Collection<LuaScript> scripts) {
		connection().thenAccept((connection) -> scripts.forEach((script) -> connection.commands().scriptLoad(script.source())));
	}

	@Override
	public boolean canSend() {
		return connected() != null;
	}

	/** The connection when it is open, else {@code null}. */
	private @Nullable Connection connected() {
		CompletableFuture<Connection> current = this.connection.get();
		return (current == null || !current.isDone() || current.isCompletedExceptionally()) ? null : current.getNow(null);
	}

	@Override
	public @Nullable CompletableFuture<List<Long>> send(LuaScript script, byte[][] keys, byte[][] args) {
		Connection current = connected();
		if (current == null) {
			return null;
		}
		CompletableFuture<List<Long>> result = new CompletableFuture<>();
		send(current.commands(), script, keys, args, result);
		return result;
	}

	/**
	 * Sends {@code EVALSHA}, then {@code EVAL} after {@code NOSCRIPT}, completing {@code result}; cancelling
	 * {@code result} cancels the command (one still queued, Redis away, is never sent).
	 */
	private static void send(RedisClusterAsyncCommands<byte[], byte[]> commands, LuaScript script, byte[][] keys,
			byte[][] args, CompletableFuture<List<Long>> result) {
		RedisFuture<Object> sent = commands.evalsha(script.sha1(), ScriptOutputType.MULTI, keys, args);
		result.whenComplete((value, failure) -> {
			if (result.isCancelled()) {
				sent.cancel(false);
			}
		});
		sent.whenComplete((value, failure) -> {
			if (failure != null && ScriptRunner.isNoScript(failure)) {
				// EVAL runs the script and caches it, so the next EVALSHA finds it.
				commands.eval(script.source(), ScriptOutputType.MULTI, keys, args)
					.whenComplete((again, failed) -> complete(result, again, failed));
			}
			else {
				complete(result, value, failure);
			}
		});
	}

	/** Completes with the reply's integers, or with the call's failure (or the reply's: not all integers). */
	private static void complete(CompletableFuture<List<Long>> result, Object value, @Nullable Throwable failure) {
		try {
			if (failure != null) {
				result.completeExceptionally(failure);
			}
			else {
				result.complete(ScriptRunner.integers(value));
			}
		}
		catch (RuntimeException ex) {
			result.completeExceptionally(ex);
		}
	}

	@Override
	public @Nullable String node(byte[] key) {
		Connection current = connected();
		if (current != null && current.commands() instanceof RedisAdvancedClusterAsyncCommands<byte[], byte[]> cluster) {
			RedisClusterNode node = cluster.getStatefulConnection().getPartitions().getPartitionBySlot(SlotHash.getSlot(key));
			if (node != null && node.getUri() != null) {
				return node.getUri().getHost() + ":" + node.getUri().getPort();
			}
		}
		return null;
	}

	private CompletableFuture<Connection> connection() {
		while (true) {
			CompletableFuture<Connection> current = this.connection.get();
			if (current != null && !current.isCompletedExceptionally()) {
				return current;
			}
			CompletableFuture<Connection> next = new CompletableFuture<>();
			if (this.connection.compareAndSet(current, next)) {
				try {
					next.completeAsync(this::connect, this.connector);
				}
				catch (RuntimeException ex) {
					next.completeExceptionally(ex);
				}
				return next;
			}
		}
	}

	private Connection connect() {
		LettuceConnection connection = (LettuceConnection) this.factory.getConnection();
		try {
			return new Connection(connection, connection.getNativeConnection());
		}
		catch (RuntimeException ex) {
			connection.close();
			throw ex;
		}
	}

	@Override
	public void close() {
		this.connector.shutdownNow();
		CompletableFuture<Connection> current = this.connection.getAndSet(null);
		if (current != null) {
			current.thenAccept((connection) -> connection.connection().close());
		}
	}

	private record Connection(LettuceConnection connection, RedisClusterAsyncCommands<byte[], byte[]> commands) {
	}
}
