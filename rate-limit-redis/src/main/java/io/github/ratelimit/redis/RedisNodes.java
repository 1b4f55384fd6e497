package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.ClusterSlotHashUtil;

/**
 * The Redis nodes the store calls, each with its breaker (the server; on Redis Cluster with Lettuce, each
 * master): which node and lane (hash slot) a key goes to, a call's run with what its reply teaches of the
 * node's clock, and what an answer or a failure does to the node's breaker, its error count and the log
 * (see the store's description, "Failure"). Thread-safe.
 */
final class RedisNodes {

	static final String CREDENTIALS_ACTION = "set spring.data.redis.username and spring.data.redis.password "
			+ "(or spring.data.redis.url) to a user that may run EVALSHA, EVAL and SCRIPT LOAD on the rate limiter's keys";

	private static final int MAX_NODES = 1024;

	private final ScriptRunner runner;

	/** The scripts' time: what a reply teaches of a node's clock, and a deadline in it. */
	final ScriptClock clock;

	final boolean clustered;

	private final int failureThreshold;

	private final long probeIntervalNanos;

	private final LongSupplier breakerNanos;

	/** How on-failure decides, for log lines. */
	private final String onFailure;

	private final RedisNode defaultNode;

	private final ConcurrentMap<String, RedisNode> nodes = new ConcurrentHashMap<>();

	private final List<Consumer<String>> listeners = new CopyOnWriteArrayList<>();

	private final ThrottledLog answeredLog = new ThrottledLog(Duration.ofMinutes(1).toNanos(), System::nanoTime);

	/** Failed calls: of every node, and those that name none (a read, a reset). */
	final LongAdder errors = new LongAdder();

	RedisNodes(RedisSettings settings, ScriptRunner runner, String onFailure) {
		this.runner = runner;
		this.clock = settings.clock;
		this.clustered = settings.clustered();
		this.failureThreshold = settings.failureThreshold;
		this.probeIntervalNanos = settings.probeInterval.toNanos();
		this.breakerNanos = settings.breakerNanos;
		this.onFailure = onFailure;
		this.defaultNode = newNode(settings.endpoint());
	}

	/** The node that serves a key: its master on a cluster (Lettuce), else the one endpoint. */
	RedisNode node(byte[] key) {
		String name = this.clustered ? this.runner.node(key) : null;
		if (name == null) {
			return this.defaultNode;
		}
		RedisNode node = this.nodes.get(name);
		if (node != null) {
			return node;
		}
		if (this.nodes.size() >= MAX_NODES) {
			// Bounded: a cluster has a handful of masters; past the bound, the rest share the default node.
			return this.defaultNode;
		}
		RedisNode created = newNode(name);
		node = this.nodes.putIfAbsent(name, created);
		if (node != null) {
			return node;
		}
		this.listeners.forEach((listener) -> listener.accept(name));
		return created;
	}

	private RedisNode newNode(String name) {
		return new RedisNode(name, new CircuitBreaker(this.failureThreshold, this.probeIntervalNanos, this.breakerNanos),
				new LongAdder(), new ServerClock());
	}

	/** A key's lane, which coalesces its calls: the connection (0), or on a cluster its hash slot. */
	int lane(byte[] key) {
		return this.clustered ? ClusterSlotHashUtil.calculateSlot(key) : 0;
	}

	/** Says whether one script call may hold all the keys: Redis is not a cluster, or they share a slot. */
	boolean oneLane(byte[][] keys) {
		int first = lane(keys[0]);
		for (byte[] key : keys) {
			if (lane(key) != first) {
				return false;
			}
		}
		return true;
	}

	/**
	 * Runs a call on a node and learns its clock from the reply.
	 * @throws Exception as {@link ScriptRunner#run} does
	 */
	ReplyPart run(ScriptCodec.Call call, RedisNode node, long deadline) throws Exception {
		long sent = System.nanoTime();
		ReplyPart reply = ReplyPart.of(this.runner.run(call.script(), call.keys(), call.args(), deadline));
		this.clock.learn(node, sent, reply);
		return reply;
	}

	/** Calls a listener with every node's name, now and as more are met. */
	void onNode(Consumer<String> listener) {
		this.listeners.add(listener);
		listener.accept(this.defaultNode.name());
		this.nodes.keySet().forEach(listener);
	}

	/** Says whether a node's breaker (every node's, for {@code null}) lets requests through. */
	boolean isAvailable(@Nullable String name) {
		if (name != null) {
			RedisNode found = this.defaultNode.name().equals(name) ? this.defaultNode : this.nodes.get(name);
			return found == null || found.breaker().state() == CircuitBreaker.State.CLOSED;
		}
		return this.defaultNode.breaker().state() == CircuitBreaker.State.CLOSED
				&& this.nodes.values().stream().allMatch((node) -> node.breaker().state() == CircuitBreaker.State.CLOSED);
	}

	/** The failed calls of a node, or of all nodes for {@code null}. */
	long errors(@Nullable String name) {
		if (name == null) {
			return this.errors.sum();
		}
		RedisNode found = this.defaultNode.name().equals(name) ? this.defaultNode : this.nodes.get(name);
		return (found != null) ? found.errors().sum() : 0;
	}

	/** Counts a failure of a call to a node: once per call, not for its breaker (see {@link #onError}). */
	void countError(RedisNode node) {
		this.errors.increment();
		node.errors().increment();
	}

	void onAnswer(RedisNode node) {
		long outage = node.breaker().onSuccess();
		if (outage >= 0) {
			RedisRateLimitStore.logger.info("Redis rate limit store answers again on " + node.name() + " after "
					+ Duration.ofNanos(outage).toMillis() + " ms; deciding with Redis");
		}
	}

	/** A call failed: counted; an outage counts for the node's breaker, an error Redis answered does not. */
	void onError(RedisNode node, Exception ex) {
		if (ex instanceof InterruptedException) {
			Thread.currentThread().interrupt();
		}
		countError(node);
		RedisError error = RedisError.of(ex);
		if (error.isCredentials()) {
			long heldBack = this.answeredLog.tryLog(error.code());
			if (heldBack >= 0) {
				RedisRateLimitStore.logger.error("Redis at " + node.name() + " refused the rate limiter (" + error.message() + "): "
						+ CREDENTIALS_ACTION + heldBack(heldBack));
			}
		}
		if (!error.kind().isOutage()) {
			// Redis answered: it is up, only this call failed. on-failure decides it; the breaker stays closed.
			onAnswer(node);
			long heldBack = error.isCredentials() ? -1 : this.answeredLog.tryLog(error.code());
			if (heldBack >= 0) {
				RedisRateLimitStore.logger.warn("Redis at " + node.name() + " answered a rate limit call with an error (" + error.message()
						+ "); that call was decided by on-failure=" + this.onFailure
						+ " (Redis is up: the breaker stays closed)" + heldBack(heldBack));
			}
			return;
		}
		if (node.breaker().onFailure()) {
			RedisRateLimitStore.logger.warn("Redis rate limit store failed on " + node.name() + " (" + error.message()
					+ "); deciding on-failure=" + this.onFailure + " for its keys without waiting for Redis until it answers again");
		}
		else if (RedisRateLimitStore.logger.isDebugEnabled()) {
			RedisRateLimitStore.logger.debug("Redis rate limit store failed on " + node.name() + "; deciding on-failure="
					+ this.onFailure, ex);
		}
	}

	private static String heldBack(long heldBack) {
		return "; logged at most once a minute per kind" + ((heldBack > 0) ? ", " + heldBack + " more since the last line" : "");
	}
}
