package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.function.LongSupplier;

import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.util.ClassUtils;

import io.github.ratelimit.core.InvalidValueException;
import io.github.ratelimit.core.OnFailure;
import io.github.ratelimit.core.RateLimitStore;

/**
 * What {@link RedisRateLimitStore.Builder} was told, with its defaults, and their validation: the one home
 * of what these values may be. A refused value is named as its property under
 * {@code rate-limit.store.redis} is, which the auto-configuration passes on. Not thread-safe; read only
 * while a store is built.
 */
final class RedisSettings {

	private static final Duration MIN_POLL_INTERVAL = Duration.ofMillis(100);

	private static final Duration MIN_LEASE_EXPIRY = Duration.ofMillis(100);

	final RedisConnectionFactory connectionFactory;

	String keyPrefix = "rate-limit:";

	@Nullable Duration timeout = Duration.ofMillis(100);

	OnFailure onFailure = OnFailure.ALLOW;

	final Map<String, OnFailure> onFailureByLimit = new HashMap<>();

	@Nullable RateLimitStore localStore;

	int failureThreshold = 3;

	@Nullable Duration probeInterval = Duration.ofSeconds(1);

	@Nullable Boolean clustered;

	int threads = 64;

	boolean failFast;

	@Nullable Duration rejectionCacheMaxAge = Duration.ofSeconds(1);

	boolean coalescing = true;

	Duration overridesPollInterval = Duration.ofSeconds(1);

	/** The scripts' time: Redis' own, or a test's. */
	ScriptClock clock = ScriptClock.SERVER;

	/** The breakers' time (probe intervals): the JVM's, or a test's. */
	LongSupplier breakerNanos = System::nanoTime;

	Duration leaseExpiry = Duration.ofSeconds(5);

	boolean refreshLeases = true;

	RedisSettings(RedisConnectionFactory connectionFactory) {
		this.connectionFactory = connectionFactory;
	}

	/**
	 * Checks every value.
	 * @throws InvalidValueException naming the wrong value as its property, and what to do
	 */
	void validate() {
		check(positive(this.timeout), "timeout", "timeout must be positive, was " + this.timeout,
				"Set how long a decision may wait for Redis, e.g. 100ms");
		check(this.failureThreshold >= 1, "breaker.failure-threshold",
				"failure threshold must be at least 1, was " + this.failureThreshold,
				"Set how many failed Redis calls in a row open the breaker, e.g. 3");
		check(positive(this.probeInterval), "breaker.probe-interval",
				"probe interval must be positive, was " + this.probeInterval,
				"Set how often an open breaker lets one request try Redis, e.g. 1s");
		check(this.rejectionCacheMaxAge != null && !this.rejectionCacheMaxAge.isNegative(), "rejection-cache",
				"rejection cache must be zero or positive, was " + this.rejectionCacheMaxAge,
				"Set how long a rejection Redis answered is kept in process, e.g. 1s (0 keeps none)");
		// Each poll is a Redis call of every instance: below this, polls cost Redis and the CPUs more than they save.
		check(this.overridesPollInterval.compareTo(MIN_POLL_INTERVAL) >= 0, "overrides-poll-interval",
				"overrides poll interval must be at least 100 ms, was " + this.overridesPollInterval,
				"Set how often each instance looks for runtime changes made elsewhere, e.g. 1s");
		// Leases are refreshed every third of it, each refresh a Redis call: shorter, they expire while held.
		check(this.leaseExpiry.compareTo(MIN_LEASE_EXPIRY) >= 0, "lease-expiry",
				"lease expiry must be at least 100 ms, was " + this.leaseExpiry,
				"Set how long a slot of a concurrency limit outlives its last refresh, e.g. 5s");
		check(this.threads >= 1, "threads", "threads must be positive, was " + this.threads,
				"Set how many threads may call Redis at once, e.g. 64");
	}

	private static boolean positive(@Nullable Duration duration) {
		return duration != null && !duration.isNegative() && !duration.isZero();
	}

	private static void check(boolean valid, String name, String problem, String action) {
		if (!valid) {
			throw new InvalidValueException(name, problem, action);
		}
	}

	long timeoutNanos() {
		return this.timeout.toNanos();
	}

	/** Whether Redis is a cluster: as told, else as the factory says (unknown factories: a cluster, always safe). */
	boolean clustered() {
		if (this.clustered != null) {
			return this.clustered;
		}
		if (isLettuce()) {
			return ((LettuceConnectionFactory) this.connectionFactory).isClusterAware();
		}
		return !isJedis() || ((JedisConnectionFactory) this.connectionFactory).isRedisClusterAware();
	}

	ScriptRunner runner() {
		return isLettuce() ? new LettuceScriptRunner((LettuceConnectionFactory) this.connectionFactory)
				: new ConnectionScriptRunner(this.connectionFactory, this.threads);
	}

	/**
	 * Says where the factory connects, for log lines: {@code host:port}, the cluster's seed nodes, or the
	 * Sentinel master.
	 */
	String endpoint() {
		try {
			if (isLettuce()) {
				LettuceConnectionFactory lettuce = (LettuceConnectionFactory) this.connectionFactory;
				return endpoint(lettuce.getClusterConfiguration(), lettuce.getSentinelConfiguration(), lettuce.getHostName(),
						lettuce.getPort());
			}
			if (isJedis()) {
				JedisConnectionFactory jedis = (JedisConnectionFactory) this.connectionFactory;
				return endpoint(jedis.getClusterConfiguration(), jedis.getSentinelConfiguration(), jedis.getHostName(),
						jedis.getPort());
			}
		}
		catch (RuntimeException ex) {
			// fall through: a name for log lines only
		}
		return "redis";
	}

	/** The configurations are {@code null} unless the factory is of a cluster, or of a Sentinel. */
	private static String endpoint(@Nullable RedisClusterConfiguration cluster, @Nullable RedisSentinelConfiguration sentinel,
			String host, int port) {
		return (cluster != null) ? "cluster " + cluster.getClusterNodes()
				: (sentinel != null) ? "sentinel master " + sentinel.getMaster().getName() : host + ":" + port;
	}

	private boolean isLettuce() {
		return ClassUtils.isPresent("io.lettuce.core.AbstractRedisClient", RedisSettings.class.getClassLoader())
				&& this.connectionFactory instanceof LettuceConnectionFactory;
	}

	private boolean isJedis() {
		return ClassUtils.isPresent("redis.clients.jedis.Jedis", RedisSettings.class.getClassLoader())
				&& this.connectionFactory instanceof JedisConnectionFactory;
	}
}
