package io.github.ratelimit.redis;

import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.jspecify.annotations.Nullable;

/**
 * Runs a script with {@code EVALSHA}, loading it with {@code EVAL} when the server answers
 * {@code NOSCRIPT} (after a restart, a fail-over or {@code SCRIPT FLUSH}), and waits for the answer
 * no longer than a deadline. Implementations are thread-safe.
 */
interface ScriptRunner extends AutoCloseable {

	/**
	 * Runs a script whose reply is an array of integers, without blocking the caller: Lettuce sends it on its
	 * connection (once connected), a client whose calls block runs it on a bounded pool.
	 * @param script the script
	 * @param keys its {@code KEYS}
	 * @param args its {@code ARGV}
	 * @param deadline a {@link System#nanoTime()} value: a call not sent by then (not connected yet, or queued
	 * for the pool) is never sent and fails with a {@link TimeoutException}
	 * @return the integers to come, or the failure: Redis failed or refused, the reply was not integers, the
	 * pool was full, the deadline passed before it was sent. Cancelling it before the command was sent keeps
	 * it from being sent.
	 */
	CompletableFuture<List<Long>> call(LuaScript script, byte[][] keys, byte[][] args, long deadline);

	/**
	 * Runs a script whose reply is an array of integers, waiting for it until a deadline. A call that gives up
	 * (timeout, interrupt) is cancelled: a command still queued, Redis away, is never sent.
	 * @param script the script
	 * @param keys its {@code KEYS}
	 * @param args its {@code ARGV}
	 * @param deadline a {@link System#nanoTime()} value; the call gives up then
	 * @return the integers
	 * @throws TimeoutException when the deadline passes first
	 * @throws Exception when Redis fails or refuses
	 */
	default List<Long> run(LuaScript script, byte[][] keys, byte[][] args, long deadline) throws Exception {
		CompletableFuture<List<Long>> reply = call(script, keys, args, deadline);
		try {
			return reply.get(remaining(deadline), TimeUnit.NANOSECONDS);
		}
		catch (TimeoutException | InterruptedException ex) {
			reply.cancel(false);
			if (ex instanceof InterruptedException) {
				Thread.currentThread().interrupt();
			}
			throw ex;
		}
		catch (ExecutionException ex) {
			throw (ex.getCause() instanceof Exception cause) ? cause : ex;
		}
	}

	/**
	 * Connects and loads the scripts in the background, so that the first decisions need not wait
	 * for either; failures are ignored (the first calls then connect and load).
	 * @param scripts the scripts to load
	 */
	void warmUp(Collection<LuaScript> scripts);

	/**
	 * Says whether {@link #send} can send now.
	 * @return {@code true} when connected, on a client that sends without blocking
	 */
	default boolean canSend() {
		return false;
	}

	/**
	 * Sends a script call without waiting, where the client can (Lettuce, once connected).
	 * @param script the script
	 * @param keys its {@code KEYS}
	 * @param args its {@code ARGV}
	 * @return the reply's integers to come, or {@code null} when this runner cannot send without
	 * blocking now (the caller then uses {@link #run})
	 */
	default @Nullable CompletableFuture<List<Long>> send(LuaScript script, byte[][] keys, byte[][] args) {
		return null;
	}

	/**
	 * Names the node that serves a key, where the client tells (Lettuce on Redis Cluster).
	 * @param key a Redis key
	 * @return {@code host:port} of the master of the key's slot, or {@code null} when not known
	 */
	default @Nullable String node(byte[] key) {
		return null;
	}

	@Override
	void close();

	static long remaining(long deadline) throws TimeoutException {
		long remaining = deadline - System.nanoTime();
		if (remaining <= 0) {
			throw new TimeoutException("Redis did not answer in time");
		}
		return remaining;
	}

	/** A daemon thread of the store's: none keeps the JVM from exiting. */
	static Thread daemon(Runnable runnable, String name) {
		Thread thread = new Thread(runnable, name);
		thread.setDaemon(true);
		return thread;
	}

	static boolean isNoScript(Throwable ex) {
		for (Throwable cause = ex; cause != null; cause = (cause.getCause() == cause) ? null : cause.getCause()) {
			if (cause.getMessage() != null && cause.getMessage().startsWith("NOSCRIPT")) {
				return true;
			}
		}
		return false;
	}

	@SuppressWarnings("unchecked")
	static List<Long> integers(Object reply) {
		if (!(reply instanceof List<?> list)) {
			throw new IllegalStateException("Unexpected reply from a rate limit script: " + reply);
		}
		for (Object value : list) {
			if (!(value instanceof Long)) {
				throw new IllegalStateException("Unexpected reply from a rate limit script: " + reply);
			}
		}
		return (List<Long>) list;
	}
}
