package io.github.ratelimit.redis;

import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

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
 * connection when the factory shares none): the calling thread waits on the reply future only until
 * the deadline, then cancels the command. Connecting happens on a background thread, so even the
 * first decision after start-up, with Redis away, waits no longer than the deadline. Thread-safe.
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
	public List<Long> run(LuaScript script, byte[][] keys, byte[][] args, long deadline,
			@Nullable Consumer<List<Long>> lateReply) throws Exception {
		RedisClusterAsyncCommands<byte[], byte[]> commands = commands(deadline);
		try {
			return ScriptRunner.await(commands.evalsha(script.sha1(), ScriptOutputType.MULTI, keys, args).toCompletableFuture(),
					deadline, lateReply);
		}
		catch (Exception ex) {
			if (!ScriptRunner.isNoScript(ex)) {
				throw ex;
			}
			// EVAL runs the script and caches it, so the next EVALSHA finds it.
			return ScriptRunner.await(commands.eval(script.source(), ScriptOutputType.MULTI, keys, args).toCompletableFuture(),
					deadline, lateReply);
		}
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
		RedisClusterAsyncCommands<byte[], byte[]> commands = current.commands();
		CompletableFuture<List<Long>> result = new CompletableFuture<>();
		commands.evalsha(script.sha1(), ScriptOutputType.MULTI, keys, args).whenComplete((value, failure) -> {
			if (failure != null && ScriptRunner.isNoScript(failure)) {
				commands.eval(script.source(), ScriptOutputType.MULTI, keys, args)
					.whenComplete((again, failed) -> complete(result, again, failed));
			}
			else {
				complete(result, value, failure);
			}
		});
		return result;
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

	private RedisClusterAsyncCommands<byte[], byte[]> commands(long deadline) throws Exception {
		CompletableFuture<Connection> current = connection();
		try {
			return current.get(ScriptRunner.remaining(deadline), TimeUnit.NANOSECONDS).commands();
		}
		catch (ExecutionException ex) {
			throw (ex.getCause() instanceof Exception cause) ? cause : ex;
		}
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
