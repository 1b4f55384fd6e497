package io.github.ratelimit.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.ClusterSlotHashUtil;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.util.ClassUtils;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.Decision;
import io.github.ratelimit.core.Limit;
import io.github.ratelimit.core.RateLimitClock;
import io.github.ratelimit.core.RateLimitStore;
import io.github.ratelimit.core.caffeine.CaffeineRateLimitStore;

/**
 * A store shared by every instance of an application: each key's state lives in Redis, and every
 * decision is one atomic Lua script call (one round trip, {@code EVALSHA}, reloaded by {@code EVAL}
 * after {@code NOSCRIPT}), so the budget is exact however many threads and instances ask at once.
 * Built with {@link #builder(RedisConnectionFactory)}; thread-safe.
 * <p>
 * <b>Clock.</b> Scripts read the Redis server's {@code TIME}, so instances whose clocks disagree
 * still agree on every budget. Scripts work in integer microseconds (exact in Lua's doubles up to
 * 2^53 µs, about 285 years); a limit whose emission interval or period is not a whole number of
 * microseconds is rounded up to the next microsecond (stricter by less than 1 µs per token).
 * <p>
 * <b>Keys.</b> {@code <keyPrefix>{<limitId>:<key>}}: the braces are a hash tag, so each script
 * touches one Redis Cluster slot. Every key has a TTL equal to the time until its state is fresh again
 * (a bucket full, a window passed), rounded up to the millisecond plus one: a key that expires would
 * have decided exactly like a missing one.
 * <p>
 * <b>Several limits per request</b> ({@link #tryAcquireAll(List)}): when all keys share a hash slot, or
 * Redis is not a cluster, one script call decides them all atomically; nobody ever sees tokens taken
 * by a request that is then rejected. Otherwise (a cluster, keys in different slots) they are acquired
 * one call after the other and, when one rejects, those already taken are released (compensation):
 * a concurrent request may briefly see them taken (and be rejected), never wrongly allowed.
 * <p>
 * <b>Failure.</b> A decision waits for Redis at most {@code timeout}; when Redis fails or is late,
 * {@link OnFailure} decides (allow, deny, or an in-process store). After {@code failureThreshold}
 * failures in a row a breaker opens: requests stop paying the timeout and are decided by
 * {@code OnFailure} at once, while one request per {@code probeInterval} tries Redis again; its
 * success closes the breaker. Each transition is logged once (WARN when opening, INFO when closing).
 * {@link #errors()} counts Redis failures, {@link #fallbacks()} the decisions {@code OnFailure} made.
 */
public final class RedisRateLimitStore implements RateLimitStore, AutoCloseable {

	private static final Log logger = LogFactory.getLog(RedisRateLimitStore.class);

	private static final byte[] ACQUIRE = bytes("acquire");

	private static final byte[] RELEASE = bytes("release");

	/** Read-only: the check script, which writes nothing. */
	private static final byte[] CHECK = bytes("check");

	/** Not a script operation: a release of nothing, which every algorithm answers without a change. */
	private static final byte[] PEEK = bytes("peek");

	private static final LuaScript RESET = LuaScript.of("reset", "return { redis.call('DEL', KEYS[1]) }");

	private static final byte[] SERVER_TIME = new byte[0];

	private static final long DENY_RETRY_AFTER_NANOS = Duration.ofSeconds(1).toNanos();

	private final ScriptRunner runner;

	private final LuaScripts scripts = LuaScripts.load();

	private final RedisKeys keys;

	private final long timeoutNanos;

	private final OnFailure onFailure;

	private final RateLimitStore localStore;

	private final CircuitBreaker breaker;

	private final boolean clustered;

	private final @Nullable LongSupplier nowMicros;

	private final LongAdder errors = new LongAdder();

	private final LongAdder fallbacks = new LongAdder();

	private RedisRateLimitStore(Builder builder, ScriptRunner runner) {
		this.runner = runner;
		this.keys = new RedisKeys(builder.keyPrefix);
		this.timeoutNanos = builder.timeout.toNanos();
		this.onFailure = builder.onFailure;
		this.localStore = (builder.localStore != null) ? builder.localStore
				: new CaffeineRateLimitStore(100_000, RateLimitClock.SYSTEM);
		this.breaker = new CircuitBreaker(builder.failureThreshold, builder.probeInterval.toNanos(), System::nanoTime);
		this.clustered = (builder.clustered != null) ? builder.clustered : isCluster(builder.connectionFactory);
		this.nowMicros = builder.nowMicros;
		runner.warmUp(this.scripts.all());
	}

	/**
	 * Starts a builder.
	 * @param connectionFactory the application's Redis connections (Lettuce or Jedis, standalone,
	 * Sentinel or Cluster)
	 * @return a builder with the defaults: key prefix {@code rate-limit:}, timeout 100 ms, fail open,
	 * breaker opening after 3 failures and probing every second
	 */
	public static Builder builder(RedisConnectionFactory connectionFactory) {
		return new Builder(connectionFactory);
	}

	@Override
	public Decision tryAcquire(Acquisition acquisition) {
		return decide(List.of(acquisition), ACQUIRE, deadline()).get(0);
	}

	@Override
	public Decision release(Acquisition acquisition) {
		return decide(List.of(acquisition), RELEASE, deadline()).get(0);
	}

	/**
	 * Checks a budget without taking anything: one call of a read-only script.
	 */
	@Override
	public Decision check(Acquisition acquisition) {
		return decide(List.of(acquisition), CHECK, deadline()).get(0);
	}

	/**
	 * Checks several budgets without taking anything: one call of a read-only script when Redis is not
	 * a cluster or all keys share a hash slot, else one call per budget. All calls together wait at
	 * most {@code timeout}.
	 */
	@Override
	public List<Decision> checkAll(List<Acquisition> acquisitions) {
		long deadline = deadline();
		if (acquisitions.size() <= 1 || !this.clustered || sameSlot(acquisitions)) {
			return decide(acquisitions, CHECK, deadline);
		}
		List<Decision> decisions = new ArrayList<>(acquisitions.size());
		for (Acquisition acquisition : acquisitions) {
			decisions.add(decide(List.of(acquisition), CHECK, deadline).get(0));
		}
		return decisions;
	}

	/**
	 * Reads a budget without changing it (one script call).
	 */
	@Override
	public Decision peek(Acquisition acquisition) {
		return decide(List.of(acquisition), PEEK, deadline()).get(0);
	}

	/**
	 * Deletes the budget's key, so it is whole again (and forgets it in the local fallback store, if
	 * any).
	 * @throws IllegalStateException when Redis does not answer in time
	 */
	@Override
	public void reset(String limitId, String key) {
		if (this.onFailure == OnFailure.LOCAL) {
			this.localStore.reset(limitId, key);
		}
		try {
			this.runner.run(RESET, new byte[][] { this.keys.key(limitId, key) }, new byte[0][], deadline());
		}
		catch (Exception ex) {
			if (ex instanceof InterruptedException) {
				Thread.currentThread().interrupt();
			}
			this.errors.increment();
			throw new IllegalStateException("Cannot reset " + redisKey(limitId, key) + ": Redis did not answer", ex);
		}
	}

	/**
	 * Takes tokens from several budgets, all or nothing: in one atomic script call when Redis is not a
	 * cluster or all keys share a hash slot, else one call per budget with compensation (see the class
	 * description). All calls together wait at most {@code timeout}.
	 */
	@Override
	public List<Decision> tryAcquireAll(List<Acquisition> acquisitions) {
		long deadline = deadline();
		if (acquisitions.size() <= 1 || !this.clustered || sameSlot(acquisitions)) {
			return decide(acquisitions, ACQUIRE, deadline);
		}
		List<Decision> decisions = new ArrayList<>(acquisitions.size());
		boolean rejected = false;
		for (Acquisition acquisition : acquisitions) {
			Decision decision = decide(List.of(acquisition), ACQUIRE, deadline).get(0);
			decisions.add(decision);
			rejected |= !decision.isAllowed();
		}
		if (rejected) {
			for (int i = 0; i < decisions.size(); i++) {
				if (decisions.get(i).isAllowed()) {
					decisions.set(i, decide(List.of(acquisitions.get(i)), RELEASE, deadline).get(0));
				}
			}
		}
		return decisions;
	}

	/**
	 * Returns how many calls to Redis failed (errors and timeouts) since start.
	 * @return the count
	 */
	public long errors() {
		return this.errors.sum();
	}

	/**
	 * Returns how many decisions were made by {@link OnFailure} instead of Redis (failed calls, and
	 * calls skipped while the breaker was open).
	 * @return the count
	 */
	public long fallbacks() {
		return this.fallbacks.sum();
	}

	/**
	 * Returns whether the breaker lets requests reach Redis.
	 * @return {@code true} unless Redis has been failing and the breaker is open (or probing)
	 */
	public boolean isAvailable() {
		return this.breaker.state() == CircuitBreaker.State.CLOSED;
	}

	/**
	 * Returns the Redis key that holds a budget's state.
	 * @param limitId the limit
	 * @param key the key
	 * @return the Redis key, {@code <keyPrefix>{<limitId>:<key>}}
	 */
	public String redisKey(String limitId, String key) {
		return new String(this.keys.key(limitId, key), StandardCharsets.UTF_8);
	}

	@Override
	public void close() {
		this.runner.close();
	}

	private long deadline() {
		return System.nanoTime() + this.timeoutNanos;
	}

	private List<Decision> decide(List<Acquisition> acquisitions, byte[] op, long deadline) {
		if (!this.breaker.tryPass()) {
			return fallback(acquisitions, op);
		}
		List<Long> reply;
		try {
			LuaScript script = (op == CHECK) ? this.scripts.check() : this.scripts.forAcquisitions(acquisitions);
			reply = this.runner.run(script, keys(acquisitions), args(acquisitions, op), deadline);
		}
		catch (Exception ex) {
			if (ex instanceof InterruptedException) {
				Thread.currentThread().interrupt();
			}
			this.errors.increment();
			if (this.breaker.onFailure()) {
				logger.warn("Redis rate limit store failed (" + describe(ex) + "); deciding on-failure="
						+ this.onFailure.name().toLowerCase() + " without waiting for Redis until it answers again");
			}
			else if (logger.isDebugEnabled()) {
				logger.debug("Redis rate limit store failed; deciding on-failure=" + this.onFailure, ex);
			}
			return fallback(acquisitions, op);
		}
		long outage = this.breaker.onSuccess();
		if (outage >= 0) {
			logger.info("Redis rate limit store answers again after " + Duration.ofNanos(outage).toMillis()
					+ " ms; deciding with Redis");
		}
		return decisions(acquisitions, reply);
	}

	private List<Decision> fallback(List<Acquisition> acquisitions, byte[] op) {
		this.fallbacks.increment();
		boolean release = op == RELEASE || op == PEEK;
		if (this.onFailure == OnFailure.LOCAL) {
			if (op == CHECK) {
				return this.localStore.checkAll(acquisitions);
			}
			if (op == PEEK) {
				return List.of(this.localStore.peek(acquisitions.get(0)));
			}
			if (release) {
				return List.of(this.localStore.release(acquisitions.get(0)));
			}
			return (acquisitions.size() == 1) ? List.of(this.localStore.tryAcquire(acquisitions.get(0)))
					: this.localStore.tryAcquireAll(acquisitions);
		}
		List<Decision> decisions = new ArrayList<>(acquisitions.size());
		for (Acquisition acquisition : acquisitions) {
			Limit limit = acquisition.limit();
			if (release || this.onFailure == OnFailure.ALLOW) {
				long remaining = (release || op == CHECK) ? limit.burst() : limit.burst() - acquisition.cost();
				decisions.add(Decision.allowed(limit.limit(), remaining, 0));
			}
			else {
				decisions.add(Decision.rejected(limit.limit(), 0, DENY_RETRY_AFTER_NANOS, DENY_RETRY_AFTER_NANOS));
			}
		}
		return decisions;
	}

	private byte[][] keys(List<Acquisition> acquisitions) {
		byte[][] keys = new byte[acquisitions.size()][];
		for (int i = 0; i < keys.length; i++) {
			Acquisition acquisition = acquisitions.get(i);
			keys[i] = this.keys.key(acquisition.limitId(), acquisition.key());
		}
		return keys;
	}

	private byte[][] args(List<Acquisition> acquisitions, byte[] op) {
		byte[][] args = new byte[2 + 7 * acquisitions.size()][];
		args[0] = (this.nowMicros != null) ? number(this.nowMicros.getAsLong()) : SERVER_TIME;
		args[1] = (op == PEEK) ? RELEASE : op;
		int i = 2;
		for (Acquisition acquisition : acquisitions) {
			Limit limit = acquisition.limit();
			args[i++] = bytes(limit.algorithm().id());
			args[i++] = number((op == PEEK) ? 0 : acquisition.cost());
			args[i++] = number(acquisition.maxWaitNanos() / 1000);
			args[i++] = number(limit.limit());
			args[i++] = number(micros(limit.period().toNanos()));
			args[i++] = number(limit.burst());
			args[i++] = number(micros(limit.emissionIntervalNanos()));
		}
		return args;
	}

	private static List<Decision> decisions(List<Acquisition> acquisitions, List<Long> reply) {
		if (reply.size() != 8 * acquisitions.size()) {
			throw new IllegalStateException("Unexpected reply from a rate limit script: " + reply);
		}
		List<Decision> decisions = new ArrayList<>(acquisitions.size());
		for (int i = 0; i < acquisitions.size(); i++) {
			long limit = acquisitions.get(i).limit().limit();
			int at = 8 * i;
			boolean allowed = reply.get(at) == 1;
			long remaining = reply.get(at + 1);
			long reset = reply.get(at + 2) * 1000;
			long retryAfter = reply.get(at + 3) * 1000 + reply.get(at + 5);
			long wait = reply.get(at + 4) * 1000;
			long next = reply.get(at + 6) * 1000 + reply.get(at + 7);
			if (!allowed) {
				decisions.add(Decision.rejected(limit, remaining, reset, next, retryAfter));
			}
			else if (wait > 0) {
				decisions.add(Decision.delayed(limit, remaining, reset, next, wait));
			}
			else {
				decisions.add(Decision.allowed(limit, remaining, reset, next));
			}
		}
		return decisions;
	}

	private boolean sameSlot(List<Acquisition> acquisitions) {
		int slot = -1;
		for (Acquisition acquisition : acquisitions) {
			int keySlot = ClusterSlotHashUtil.calculateSlot(this.keys.key(acquisition.limitId(), acquisition.key()));
			if (slot != -1 && keySlot != slot) {
				return false;
			}
			slot = keySlot;
		}
		return true;
	}

	private static long micros(long nanos) {
		return -Math.floorDiv(-nanos, 1000L);
	}

	private static byte[] number(long value) {
		return bytes(Long.toString(value));
	}

	private static byte[] bytes(String value) {
		return value.getBytes(StandardCharsets.US_ASCII);
	}

	private static String describe(Throwable ex) {
		Throwable root = ex;
		while (root.getCause() != null && root.getCause() != root) {
			root = root.getCause();
		}
		return (root == ex) ? String.valueOf(ex) : ex + ", caused by " + root;
	}

	private static boolean isLettuce(RedisConnectionFactory factory) {
		return ClassUtils.isPresent("io.lettuce.core.AbstractRedisClient", RedisRateLimitStore.class.getClassLoader())
				&& factory instanceof LettuceConnectionFactory;
	}

	private static boolean isCluster(RedisConnectionFactory factory) {
		if (isLettuce(factory)) {
			return ((LettuceConnectionFactory) factory).isClusterAware();
		}
		if (ClassUtils.isPresent("redis.clients.jedis.Jedis", RedisRateLimitStore.class.getClassLoader())
				&& factory instanceof JedisConnectionFactory jedis) {
			return jedis.isRedisClusterAware();
		}
		// Unknown: assume a cluster, which is always safe.
		return true;
	}

	/**
	 * Builds a {@link RedisRateLimitStore}, validating every value. Not thread-safe.
	 */
	public static final class Builder {

		private final RedisConnectionFactory connectionFactory;

		private String keyPrefix = "rate-limit:";

		private Duration timeout = Duration.ofMillis(100);

		private OnFailure onFailure = OnFailure.ALLOW;

		private @Nullable RateLimitStore localStore;

		private int failureThreshold = 3;

		private Duration probeInterval = Duration.ofSeconds(1);

		private @Nullable Boolean clustered;

		private int threads = 64;

		private @Nullable LongSupplier nowMicros;

		private Builder(RedisConnectionFactory connectionFactory) {
			this.connectionFactory = Objects.requireNonNull(connectionFactory, "connectionFactory");
		}

		/**
		 * Sets the prefix of every Redis key ({@code rate-limit:} when not called).
		 * @param keyPrefix the prefix; may be empty
		 * @return this builder
		 */
		public Builder keyPrefix(String keyPrefix) {
			this.keyPrefix = Objects.requireNonNull(keyPrefix, "keyPrefix");
			return this;
		}

		/**
		 * Sets the most a decision waits for Redis (100 ms when not called).
		 * @param timeout positive
		 * @return this builder
		 */
		public Builder timeout(Duration timeout) {
			this.timeout = Objects.requireNonNull(timeout, "timeout");
			return this;
		}

		/**
		 * Sets what decides when Redis fails ({@link OnFailure#ALLOW} when not called).
		 * @param onFailure the choice
		 * @return this builder
		 */
		public Builder onFailure(OnFailure onFailure) {
			this.onFailure = Objects.requireNonNull(onFailure, "onFailure");
			return this;
		}

		/**
		 * Sets the in-process store {@link OnFailure#LOCAL} decides with (a Caffeine store of 100,000 keys
		 * per limit when not called).
		 * @param localStore the store
		 * @return this builder
		 */
		public Builder localStore(RateLimitStore localStore) {
			this.localStore = Objects.requireNonNull(localStore, "localStore");
			return this;
		}

		/**
		 * Sets the breaker (3 failures, probing every second, when not called).
		 * @param failureThreshold failures in a row that open the breaker; at least 1
		 * @param probeInterval how long an open breaker waits before one request tries Redis again
		 * @return this builder
		 */
		public Builder breaker(int failureThreshold, Duration probeInterval) {
			this.failureThreshold = failureThreshold;
			this.probeInterval = Objects.requireNonNull(probeInterval, "probeInterval");
			return this;
		}

		/**
		 * Says whether Redis is a cluster (detected from Lettuce and Jedis factories when not called;
		 * other factories are taken for clusters, which is always safe).
		 * @param clustered {@code true} for Redis Cluster
		 * @return this builder
		 */
		public Builder clustered(boolean clustered) {
			this.clustered = clustered;
			return this;
		}

		/**
		 * Sets how many threads call Redis for clients whose calls block (Jedis); 64 when not called.
		 * Lettuce needs none.
		 * @param threads positive
		 * @return this builder
		 */
		public Builder threads(int threads) {
			this.threads = threads;
			return this;
		}

		/**
		 * Replaces the server's {@code TIME} with a clock of the caller's, for tests only.
		 * @param nowMicros epoch microseconds
		 * @return this builder
		 */
		Builder clock(LongSupplier nowMicros) {
			this.nowMicros = nowMicros;
			return this;
		}

		/**
		 * Builds the store.
		 * @return the store
		 * @throws IllegalArgumentException saying which value is wrong
		 */
		public RedisRateLimitStore build() {
			if (this.timeout.isNegative() || this.timeout.isZero()) {
				throw new IllegalArgumentException("timeout must be positive, was " + this.timeout);
			}
			if (this.failureThreshold < 1) {
				throw new IllegalArgumentException("failureThreshold must be at least 1, was " + this.failureThreshold);
			}
			if (this.probeInterval.isNegative() || this.probeInterval.isZero()) {
				throw new IllegalArgumentException("probeInterval must be positive, was " + this.probeInterval);
			}
			if (this.threads < 1) {
				throw new IllegalArgumentException("threads must be positive, was " + this.threads);
			}
			ScriptRunner runner = isLettuce(this.connectionFactory)
					? new LettuceScriptRunner((LettuceConnectionFactory) this.connectionFactory)
					: new ConnectionScriptRunner(this.connectionFactory, this.threads);
			return new RedisRateLimitStore(this, runner);
		}
	}
}
