package io.github.ratelimit.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnectionFactory;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.CaffeineRateLimitStore;
import io.github.ratelimit.core.Decision;
import io.github.ratelimit.core.InvalidValueException;
import io.github.ratelimit.core.OnFailure;
import io.github.ratelimit.core.RateLimitStore;
import io.github.ratelimit.core.Receipt;
import io.github.ratelimit.core.SharedPolicyOverrides;

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
 * <b>Limits that change.</b> A key's limit may differ from one request to the next (its plan, or the
 * policy changed at run time). A bucket's state holds the emission interval it was written with
 * ({@code "<tat> <interval>"}) and a script meeting another interval moves it as
 * {@link io.github.ratelimit.core.LimiterState#moveTo} does ({@code tat' = now + (tat - now) * T' / T}):
 * spent tokens stay spent. A fixed window keeps its end (a new period takes effect from the next window),
 * a window counter holds its period, a log keeps its entries.
 * <p>
 * <b>Several limits per request</b> ({@link #tryAcquireAll(List)}): when all keys share a hash slot, or
 * Redis is not a cluster, one script call decides them all atomically; nobody ever sees tokens taken
 * by a request that is then rejected. Otherwise (a cluster, keys in different slots) they are acquired
 * one call after the other and, when one rejects, those already taken are released (compensation):
 * a concurrent request may briefly see them taken (and be rejected), never wrongly allowed.
 * <p>
 * <b>Failure.</b> A decision waits for Redis at most {@code timeout}; when Redis fails or is late,
 * {@link OnFailure} decides (allow, deny, or an in-process store). Each node (the server; on Redis
 * Cluster with Lettuce, each master) has its own breaker: after {@code failureThreshold} outages in a
 * row on a node (no answer, or an answer meaning it serves nothing: {@code CLUSTERDOWN},
 * {@code LOADING}, {@code BUSY}, {@code MASTERDOWN}, {@code READONLY}, wrong credentials) its breaker
 * opens: requests for its keys stop paying the timeout and are decided by {@code OnFailure} at once,
 * while one request per {@code probeInterval} tries it again; its success closes the breaker. Other
 * errors Redis answers (OOM, a script error, {@code NOPERM} on a key) fail that call only: it is
 * decided by {@code OnFailure}, the breaker stays closed, and each kind is logged at most once a
 * minute. Each transition is logged once per node (WARN when opening, INFO when closing).
 * {@link #errors()} counts Redis failures, {@link #fallbacks()} the decisions {@code OnFailure} made.
 * <p>
 * <b>Coalescing.</b> With Lettuce, decisions that arrive while two calls are in flight on their lane (the
 * connection; on a cluster, the hash slot) go together in the next script call ({@code Coalescer}),
 * each all or nothing on its own; a request alone is sent at once.
 * <p>
 * <b>No late charges.</b> Each reply carries the server time its script read; from it the store bounds
 * each node's clock offset ({@code ServerClock}) and gives every acquisition a deadline in the node's
 * time, no later than the instant the caller gives up: a script that starts after it (Redis paused or
 * busy, the command queued) changes nothing. A reply that comes after the caller gave up and shows
 * tokens taken is given back by a release on a background thread.
 * <p>
 * <b>Rejections kept in process.</b> A rejection Redis answered for a single acquisition of a rate
 * algorithm without a wait is kept until its Retry-After (at most the rejection cache's age, 1 s by
 * default): requests for that key of the same limit and at least that cost are rejected without a
 * call. A release or reset through this store drops it; a reset on another instance within the
 * overrides poll interval (below), a release there within that age. Only rejections are kept, so nothing is ever allowed without Redis.
 * <p>
 * <b>Runtime changes of policies</b> ({@link SharedPolicyOverrides}) are kept in the hash
 * {@code <keyPrefix>{overrides}} with the counter {@code <keyPrefix>{overrides}:version} (one slot, no
 * TTL); each instance polls the counter every {@code overridesPollInterval} (1 s by default) and, when
 * it moved, reads the hash and forgets every rejection it keeps. A reset of a key moves the counter
 * too, so within that interval no instance keeps a rejection of a key that was reset elsewhere.
 * <p>
 * <b>Give-backs</b> ({@link #admitAll(List)}, {@link #giveBack(Receipt)}, for {@code count: failures}). An
 * admission takes its cost in the same script call as {@link #tryAcquireAll(List)}; each receipt's mark
 * says where (a bucket's tat, a window's end or start, a log entry's timestamp, in the scripts'
 * microseconds). A give-back runs {@code give-back.lua} (after every algorithm, as the check does), which
 * returns only what the attempt still holds under the limit in force, never creates a key nor moves a
 * state to another limit; it is sent asynchronously, coalesced on lanes of its own, and drops this
 * instance's kept rejection of the key. A give-back that fails leaves the attempt charged.
 * <p>
 * <b>Concurrency limits</b> ({@link Algorithm#CONCURRENCY}). A key's requests in flight are leases in a
 * sorted set: one member per slot (an id unique to this store and request), scored with its expiry in
 * Redis' time ({@code leaseExpiry}, 5 s by default); a script drops the expired leases, counts the
 * others and adds the new one in one atomic call ({@code ZREMRANGEBYSCORE}, {@code ZCARD}, {@code ZADD}),
 * so the budget is one and exact across instances. While a request runs, a thread of this store
 * refreshes its leases every third of the expiry, one script call per hash slot for all leases of that
 * slot; a release removes the request's lease. An instance that dies (or a release that fails, or
 * refreshes that fail for a whole expiry) frees its slots once their leases expire, never later; and as
 * long as refreshes succeed in time the limit is never exceeded. A slot on-failure granted is given back
 * where it was taken (the local store, or nowhere). The rejection cache and coalescing never apply to
 * concurrency limits: a slot comes back when a request ends, not at a time a rejection could tell, and
 * each acquisition carries its own lease.
 * <p>
 * <b>Start-up.</b> {@link Builder#build()} waits (at most a second) for one call that connects and
 * reads a key: refused credentials are logged as an ERROR naming {@code spring.data.redis.username}
 * and {@code password}, an unreachable Redis as a WARN; with {@link Builder#failFast(boolean)} both
 * fail the build.
 */
public final class RedisRateLimitStore implements RateLimitStore, SharedPolicyOverrides, AutoCloseable {

	/** The log of the store and its parts. */
	static final Log logger = LogFactory.getLog(RedisRateLimitStore.class);

	private static final LuaScript RESET = LuaScript.of("reset", "return { redis.call('DEL', unpack(KEYS)) }");

	/** The rest of a key's ban in microseconds ({@code ARGV[1]}: a test's time, or {@code ''} for the server's). */
	private static final LuaScript BANNED = LuaScript.of("banned", """
			local now
			if ARGV[1] ~= '' then
			  now = tonumber(ARGV[1])
			else
			  local time = redis.call('TIME')
			  now = tonumber(time[1]) * 1000000 + tonumber(time[2])
			end
			return { math.max(0, (tonumber(redis.call('HGET', KEYS[1], 'until')) or 0) - now) }
			""");

	private final RedisConnectionFactory connectionFactory;

	private final ScriptRunner runner;

	final ScriptCodec codec;

	final RedisNodes nodes;

	final Fallback fallback;

	final RejectionCache rejections;

	final RedisOverrides overrides;

	final Leases leases;

	final GiveBacks giveBacks;

	/** Bounds the calls that no thread waits for ({@link #admitAllAsync}, give-backs) in time. */
	private final Timeouts timeouts = new Timeouts();

	final Decider decider;

	private final StartUp startUp;

	private RedisRateLimitStore(RedisSettings settings) {
		this.connectionFactory = settings.connectionFactory;
		this.runner = settings.runner();
		this.codec = new ScriptCodec(settings);
		this.fallback = new Fallback(settings);
		this.nodes = new RedisNodes(settings, this.runner, this.fallback.describe());
		this.rejections = new RejectionCache(settings.clock.rejectionCacheNanos(settings.rejectionCacheMaxAge));
		this.overrides = new RedisOverrides(settings.connectionFactory, settings.keyPrefix, settings.overridesPollInterval,
				this.rejections::clear);
		this.leases = new Leases(settings, this.codec, this.nodes);
		this.giveBacks = new GiveBacks(settings, this.runner, this.codec, this.nodes, this.rejections, this.timeouts);
		this.decider = new Decider(settings, this.runner, this.codec, this.nodes, this.fallback, this.leases, this.giveBacks,
				this.rejections, this.timeouts);
		this.runner.warmUp(this.codec.scripts.all());
		this.startUp = new StartUp(settings, this.runner, this.codec, this.nodes, this.fallback.describe());
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
		return this.decider.decide(List.of(acquisition), ScriptOp.ACQUIRE, this.decider.deadline()).first();
	}

	@Override
	public Decision release(Acquisition acquisition) {
		return this.decider.release(acquisition, this.decider.deadline());
	}

	/**
	 * Checks a budget without taking anything: one call of a read-only script.
	 */
	@Override
	public Decision check(Acquisition acquisition) {
		return this.decider.decide(List.of(acquisition), ScriptOp.CHECK, this.decider.deadline()).first();
	}

	/**
	 * Checks several budgets without taking anything: one call of a read-only script when Redis is not
	 * a cluster or all keys share a hash slot, else one call per budget. All calls together wait at
	 * most {@code timeout}.
	 */
	@Override
	public List<Decision> checkAll(List<Acquisition> acquisitions) {
		return this.decider.decideAll(acquisitions, ScriptOp.CHECK);
	}

	/**
	 * Reads a budget without changing it (one script call): what an operator reads (the actuator), so a
	 * budget Redis did not show is never made up by {@code on-failure}.
	 * @throws IllegalStateException when Redis does not answer in time, or answers an error
	 */
	@Override
	public Decision peek(Acquisition acquisition) {
		List<Acquisition> acquisitions = List.of(acquisition);
		byte[][] keys = this.codec.keys(acquisitions);
		try {
			return this.nodes.run(this.codec.call(ScriptOp.PEEK, acquisitions, keys, ScriptCodec.NO_DEADLINE, null),
					this.nodes.node(keys[0]), this.decider.deadline()).decisions(acquisitions).get(0);
		}
		catch (Exception ex) {
			throw unanswered("read " + redisKey(acquisition.limitId(), acquisition.key()), ex);
		}
	}

	@Override
	public boolean bans() {
		return true;
	}

	/**
	 * Reads the rest of a key's ban (one script call): what an operator reads (the actuator).
	 * @throws IllegalStateException when Redis does not answer in time, or answers an error
	 */
	@Override
	public long bannedNanos(Acquisition acquisition) {
		byte[] banKey = RedisKeys.banKey(this.codec.keys.key(acquisition.limitId(), acquisition.key()));
		try {
			return this.runner.run(BANNED, new byte[][] { banKey }, new byte[][] { this.nodes.clock.arg() },
					this.decider.deadline()).get(0) * 1000;
		}
		catch (Exception ex) {
			throw unanswered("read the ban of " + redisKey(acquisition.limitId(), acquisition.key()), ex);
		}
	}

	/**
	 * Deletes the budget's key and its ban's, so it is whole again and the key no longer banned (and
	 * forgets it in the local fallback store, if any).
	 * @throws IllegalStateException when Redis does not answer in time
	 */
	@Override
	public void reset(String limitId, String key) {
		this.rejections.drop(limitId, key);
		this.fallback.reset(limitId, key);
		try {
			byte[] stateKey = this.codec.keys.key(limitId, key);
			this.runner.run(RESET, new byte[][] { stateKey, RedisKeys.banKey(stateKey) }, new byte[0][],
					this.decider.deadline());
		}
		catch (Exception ex) {
			throw unanswered("reset " + redisKey(limitId, key), ex);
		}
		// Tokens came back: every instance forgets its rejections within the poll interval.
		this.overrides.touch();
	}

	private IllegalStateException unanswered(String what, Exception ex) {
		if (ex instanceof InterruptedException) {
			Thread.currentThread().interrupt();
		}
		this.nodes.errors.increment();
		return new IllegalStateException("Cannot " + what + ": Redis did not answer", ex);
	}

	/**
	 * Stores a runtime change of a policy in Redis ({@code <keyPrefix>{overrides}}), for every instance.
	 */
	@Override
	public void storeOverride(String policy, @Nullable String value) {
		this.overrides.store(policy, value);
	}

	/**
	 * Reads the runtime changes kept in Redis now (waiting at most 2 s), then polls for changes every
	 * {@code overridesPollInterval}.
	 */
	@Override
	public void listenToOverrides(Consumer<Map<String, String>> listener) {
		this.overrides.listen(listener);
	}

	/**
	 * Tells whether the runtime changes being handed to the listener were read after this instance's last
	 * change: a poll that read Redis before it must not put a policy back as it was (the next poll reads again).
	 */
	@Override
	public boolean isCurrent(Map<String, String> overrides) {
		return this.overrides.isCurrent();
	}

	/**
	 * Deletes every budget's key of this store's prefix ({@code <keyPrefix>{*:*}}, found with {@code SCAN},
	 * deleted with {@code UNLINK}; on Redis Cluster on every master; the runtime changes of policies stay,
	 * as every instance holds them), and forgets the rejections kept in
	 * process and the local fallback's budgets: for tests only. On a shared Redis it resets the budgets of
	 * every instance that uses this prefix; it waits for Redis as long as the scan takes, not
	 * {@code timeout}.
	 * @throws IllegalStateException when Redis fails
	 */
	@Override
	public void resetAll() {
		this.rejections.clear();
		this.fallback.reset(null, null);
		try {
			this.codec.keys.unlinkAll(this.connectionFactory);
		}
		catch (RuntimeException ex) {
			this.nodes.errors.increment();
			throw new IllegalStateException("Cannot reset the budgets of " + new String(this.codec.keys.pattern(), StandardCharsets.UTF_8)
					+ ": " + ex.getMessage(), ex);
		}
	}

	/**
	 * Takes tokens from several budgets, all or nothing: in one atomic script call when Redis is not a
	 * cluster or all keys share a hash slot, else one call per budget with compensation (see the class
	 * description). All calls together wait at most {@code timeout}.
	 */
	@Override
	public List<Decision> tryAcquireAll(List<Acquisition> acquisitions) {
		return this.decider.decideAll(acquisitions, ScriptOp.ACQUIRE);
	}

	/**
	 * Takes tokens from several budgets, all or nothing, as {@link #tryAcquireAll(List)} does (the same
	 * script calls), with a receipt per acquisition whose mark is computed from its decision and the time
	 * the script read (see {@code Outcome#mark}). A receipt says where the cost was taken: {@code STORE} when Redis
	 * decided, {@code LOCAL} when the local store did ({@code on-failure: local}, with that store's receipt
	 * and mark), {@code NOWHERE} when {@code on-failure} let the request through ({@code allow}) or refused it
	 * ({@code deny}), and for the acquisitions of a request another budget rejected (given back at once:
	 * nothing is held). Concurrency limits keep no mark: their slots come back with their release.
	 */
	@Override
	public List<Receipt> admitAll(List<Acquisition> acquisitions) {
		return this.decider.admit(acquisitions);
	}

	/**
	 * {@link #admitAll(List)} without blocking the caller: the step completes on the Redis client's thread when
	 * Redis answers, on a timer's when the timeout passes first (then on-failure decides), or at once (a
	 * rejection kept in process, an open breaker). The same calls as {@code admitAll}: coalesced, with the same
	 * deadlines, breakers and fallbacks. With a client whose calls block (Jedis) the calls run on the store's
	 * bounded pool ({@link Builder#threads(int)}).
	 */
	@Override
	public CompletionStage<List<Receipt>> admitAllAsync(List<Acquisition> acquisitions) {
		return this.decider.admitAsync(acquisitions);
	}

	/**
	 * Gives back what an admitted acquisition still holds (see {@link Receipt}) without waiting: taken in
	 * Redis, a give-back script call (a concurrency limit's slot: its release) is sent asynchronously, coalesced
	 * with others of its lane as decisions are, and this method returns {@code null} at once; taken in the local
	 * store, that store gives back.
	 * This instance's cached rejection of the key is dropped at once (and again when Redis answered); other
	 * instances keep theirs at most their rejection cache's age. A give-back that fails, times out or meets
	 * an open breaker leaves the attempt charged (never generous): it is logged at debug, and a failed call
	 * is counted in {@link #errors()} (not by the node's breaker: a give-back holds no request thread).
	 */
	@Override
	public @Nullable Decision giveBack(Receipt receipt) {
		return this.decider.giveBack(receipt);
	}

	/**
	 * Warms the decision path before the application takes traffic: scripts loaded and the connection open
	 * (both started by {@link Builder#build()}), then, on four threads at once so
	 * that coalescing batches too, up to 2,500 rounds each of a decision, an admission
	 * and its give-back, on throwaway keys of a limit id of this instance's own ({@code warm-up.<random>})
	 * whose states expire within milliseconds and are deleted at the end. A first instance is otherwise
	 * interpreted and compiling while its first requests wait for Redis' answers, and late answers send
	 * decisions to on-failure. Waits, within the budget, for the start-up check's answer (a cold JVM's first
	 * connection may take over a second); does nothing when it failed (Redis away or refused) or did not come
	 * within the budget, and stops at the first decision that on-failure made.
	 * @param budget the most this takes (checked between rounds; each call waits at most the timeout)
	 * @return the decisions, admissions and give-backs Redis answered
	 */
	public int warmUp(Duration budget) {
		return this.startUp.warmUp(this, budget);
	}

	/**
	 * Returns how many calls to Redis failed (errors and timeouts) since start.
	 * @return the count
	 */
	public long errors() {
		return this.nodes.errors(null);
	}

	/**
	 * Returns how many decisions were made by {@link OnFailure} instead of Redis (failed calls, and
	 * calls skipped while the breaker was open).
	 * @return the count
	 */
	public long fallbacks() {
		return this.fallback.fallbacks.sum();
	}

	/**
	 * Returns whether the breakers let requests reach Redis.
	 * @return {@code true} unless Redis (on a cluster, one of its masters) has been failing and its breaker
	 * is open (or probing)
	 */
	public boolean isAvailable() {
		return this.nodes.isAvailable(null);
	}

	/**
	 * Calls a listener with the name of every Redis node the store has sent calls to, now and as it meets
	 * more (on Redis Cluster with Lettuce, each master; otherwise the one endpoint), e.g. to register
	 * metrics per node.
	 * @param listener called with {@code host:port} (or a description of the endpoint), on the thread
	 * that meets the node
	 */
	public void onNode(Consumer<String> listener) {
		this.nodes.onNode(listener);
	}

	/**
	 * Returns how many calls to one node failed since start.
	 * @param node a name given to an {@link #onNode(Consumer)} listener
	 * @return the count, 0 for a node the store does not know
	 */
	public long errors(String node) {
		return this.nodes.errors(node);
	}

	/**
	 * Returns whether one node's breaker lets requests for its keys reach it.
	 * @param node a name given to an {@link #onNode(Consumer)} listener
	 * @return {@code false} while that node has been failing and its breaker is open (or probing)
	 */
	public boolean isAvailable(String node) {
		return this.nodes.isAvailable(node);
	}

	/**
	 * Returns the Redis key that holds a budget's state.
	 * @param limitId the limit
	 * @param key the key
	 * @return the Redis key, {@code <keyPrefix>{<limitId>:<key>}}
	 */
	public String redisKey(String limitId, String key) {
		return new String(this.codec.keys.key(limitId, key), StandardCharsets.UTF_8);
	}

	@Override
	public void close() {
		this.overrides.close();
		this.leases.close();
		this.giveBacks.close();
		this.runner.close();
		this.timeouts.close();
	}

	/**
	 * Builds a {@link RedisRateLimitStore}, validating every value. Not thread-safe.
	 */
	public static final class Builder {

		private final RedisSettings settings;

		private Builder(RedisConnectionFactory connectionFactory) {
			this.settings = new RedisSettings(Objects.requireNonNull(connectionFactory, "connectionFactory"));
		}

		/**
		 * Sets the prefix of every Redis key ({@code rate-limit:} when not called).
		 * @param keyPrefix the prefix; may be empty
		 * @return this builder
		 */
		public Builder keyPrefix(String keyPrefix) {
			this.settings.keyPrefix = Objects.requireNonNull(keyPrefix, "keyPrefix");
			return this;
		}

		/**
		 * Sets the most a decision waits for Redis (100 ms when not called).
		 * @param timeout positive
		 * @return this builder
		 */
		public Builder timeout(Duration timeout) {
			this.settings.timeout = timeout;
			return this;
		}

		/**
		 * Sets what decides when Redis fails ({@link OnFailure#ALLOW} when not called).
		 * @param onFailure the choice
		 * @return this builder
		 */
		public Builder onFailure(OnFailure onFailure) {
			this.settings.onFailure = Objects.requireNonNull(onFailure, "onFailure");
			return this;
		}

		/**
		 * Sets what decides one limit's acquisitions when Redis fails, instead of the store's choice
		 * ({@link #onFailure(OnFailure)}): a login lockout may decide {@link OnFailure#LOCAL} while API quotas
		 * fail open. A request with several limits takes each one's choice, all or nothing.
		 * @param limitId the limit's id (a configured policy's name)
		 * @param onFailure its choice
		 * @return this builder
		 */
		public Builder onFailure(String limitId, OnFailure onFailure) {
			this.settings.onFailureByLimit.put(Objects.requireNonNull(limitId, "limitId"),
					Objects.requireNonNull(onFailure, "onFailure"));
			return this;
		}

		/**
		 * Sets the in-process store {@link OnFailure#LOCAL} decides with (a Caffeine store of
		 * {@link CaffeineRateLimitStore#DEFAULT_MAXIMUM_SIZE} keys per limit when not called).
		 * @param localStore the store
		 * @return this builder
		 */
		public Builder localStore(RateLimitStore localStore) {
			this.settings.localStore = Objects.requireNonNull(localStore, "localStore");
			return this;
		}

		/**
		 * Sets the breaker (3 failures, probing every second, when not called).
		 * @param failureThreshold failures in a row that open the breaker; at least 1
		 * @param probeInterval how long an open breaker waits before one request tries Redis again
		 * @return this builder
		 */
		public Builder breaker(int failureThreshold, Duration probeInterval) {
			this.settings.failureThreshold = failureThreshold;
			this.settings.probeInterval = probeInterval;
			return this;
		}

		/**
		 * Says whether Redis is a cluster (detected from Lettuce and Jedis factories when not called;
		 * other factories are taken for clusters, which is always safe).
		 * @param clustered {@code true} for Redis Cluster
		 * @return this builder
		 */
		public Builder clustered(boolean clustered) {
			this.settings.clustered = clustered;
			return this;
		}

		/**
		 * Sets how many threads call Redis for clients whose calls block (Jedis); 64 when not called.
		 * Lettuce needs none.
		 * @param threads positive
		 * @return this builder
		 */
		public Builder threads(int threads) {
			this.settings.threads = threads;
			return this;
		}

		/**
		 * Sets the longest a rejection Redis answered is kept in process (1 s when not called; zero keeps
		 * none). While kept, requests for that key of the same limit and at least that cost are rejected
		 * without calling Redis, until the Retry-After Redis gave; a release or reset through this store
		 * drops it at once; a reset on another instance is seen within the overrides poll interval, a
		 * release there within this age.
		 * @param maxAge zero or positive
		 * @return this builder
		 */
		public Builder rejectionCache(Duration maxAge) {
			this.settings.rejectionCacheMaxAge = maxAge;
			return this;
		}

		/**
		 * Says whether decisions that arrive while a call is in flight on their connection (on a cluster,
		 * their hash slot) go together in the next script call, each all or nothing on its own (on when
		 * not called; Lettuce only, Jedis calls block).
		 * @param coalescing {@code false} for one script call per decision
		 * @return this builder
		 */
		public Builder coalescing(boolean coalescing) {
			this.settings.coalescing = coalescing;
			return this;
		}

		/**
		 * Sets how often the store looks for runtime changes of policies made on other instances (and resets
		 * of keys, which drop cached rejections): one {@code GET} of a counter per interval (1 s when not
		 * called).
		 * @param pollInterval at least 100 ms
		 * @return this builder
		 */
		public Builder overridesPollInterval(Duration pollInterval) {
			this.settings.overridesPollInterval = Objects.requireNonNull(pollInterval, "pollInterval");
			return this;
		}

		/**
		 * Makes {@link #build()} fail when Redis refuses the credentials or does not answer within 10 s (off
		 * when not called: such an answer is logged, as an ERROR for credentials, and on-failure decides until
		 * Redis answers).
		 * @param failFast {@code true} to fail
		 * @return this builder
		 */
		public Builder failFast(boolean failFast) {
			this.settings.failFast = failFast;
			return this;
		}

		/**
		 * Sets how long a slot of a concurrency limit outlives its last refresh (5 s when not called): the
		 * store refreshes the leases of requests in flight every third of it, so an instance that dies
		 * frees its slots within this time.
		 * @param leaseExpiry at least 100 ms, in Redis' time
		 * @return this builder
		 */
		public Builder leaseExpiry(Duration leaseExpiry) {
			this.settings.leaseExpiry = Objects.requireNonNull(leaseExpiry, "leaseExpiry");
			return this;
		}

		/**
		 * Stops the refresher (tests only: they call {@code Leases#refresh()} themselves).
		 * @return this builder
		 */
		Builder withoutLeaseRefresher() {
			this.settings.refreshLeases = false;
			return this;
		}

		/**
		 * Replaces the server's {@code TIME} with a clock of the caller's, for tests only.
		 * @param nowMicros epoch microseconds
		 * @return this builder
		 */
		Builder clock(LongSupplier nowMicros) {
			this.settings.clock = new ScriptClock(nowMicros);
			return this;
		}

		/**
		 * Replaces the JVM's clock that times the breakers' probe intervals, for tests only.
		 * @param nanoTime nanoseconds, as {@link System#nanoTime()}
		 * @return this builder
		 */
		Builder breakerClock(LongSupplier nanoTime) {
			this.settings.breakerNanos = nanoTime;
			return this;
		}

		/**
		 * Builds the store.
		 * After at most a second (ten with {@link #failFast(boolean)}), whether or not Redis answered a first
		 * call that connects and reads one key; wrong credentials are then logged as an ERROR.
		 * @return the store
		 * @throws InvalidValueException naming the wrong value as its property under {@code rate-limit.store.redis} is
		 * named ({@code timeout}, {@code breaker.failure-threshold}, {@code breaker.probe-interval},
		 * {@code rejection-cache}, {@code overrides-poll-interval}, {@code lease-expiry}) or {@code threads}, and what
		 * to do
		 * @throws IllegalStateException with fail-fast, when Redis refused the credentials or did not answer
		 */
		public RedisRateLimitStore build() {
			this.settings.validate();
			RedisRateLimitStore store = new RedisRateLimitStore(this.settings);
			try {
				store.startUp.await();
			}
			catch (IllegalStateException ex) {
				store.close();
				throw ex;
			}
			return store;
		}
	}
}
