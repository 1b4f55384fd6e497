package io.github.ratelimit.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.ClusterSlotHashUtil;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.util.ClassUtils;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.CaffeineRateLimitStore;
import io.github.ratelimit.core.Decision;
import io.github.ratelimit.core.InvalidValueException;
import io.github.ratelimit.core.Limit;
import io.github.ratelimit.core.OnFailure;
import io.github.ratelimit.core.RateLimitClock;
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

	private static final Log logger = LogFactory.getLog(RedisRateLimitStore.class);

	private static final byte[] ACQUIRE = bytes("acquire");

	private static final Duration MIN_POLL_INTERVAL = Duration.ofMillis(100);

	private static final Duration MIN_LEASE_EXPIRY = Duration.ofMillis(100);

	private static final byte[] RELEASE = bytes("release");

	/** Gives back what a receipt still holds (give-back.lua): the acquisition's max wait carries the mark. */
	private static final byte[] GIVE_BACK = bytes("giveback");

	/** Read-only: the check script, which writes nothing. */
	private static final byte[] CHECK = bytes("check");

	/** Not a script operation: a release of nothing, which every algorithm answers without a change. */
	private static final byte[] PEEK = bytes("peek");

	private static final LuaScript RESET = LuaScript.of("reset", "return { redis.call('DEL', KEYS[1]) }");

	private static final byte[] SERVER_TIME = new byte[0];

	private static final byte[] NO_DEADLINE = new byte[0];

	private static final byte[] BATCH = bytes("batch");

	private static final long DENY_RETRY_AFTER_NANOS = Duration.ofSeconds(1).toNanos();

	/** How long start-up waits for the first answer: wrong credentials and a refused connection take milliseconds. */
	private static final Duration START_UP_CHECK = Duration.ofSeconds(1);

	/** How long start-up waits for the first answer with fail-fast: longer than a connect timeout on a slow network. */
	private static final Duration FAIL_FAST_CHECK = Duration.ofSeconds(10);

	/** The start-up check's attempts at most, when the connection fails before Redis answers. */
	private static final int STARTUP_ATTEMPTS = 3;

	/** The pause between two attempts of the start-up check. */
	private static final Duration STARTUP_RETRY = Duration.ofMillis(100);

	private static final int MAX_NODES = 1024;

	/** Threads of the warm-up ({@link #warmUp(Duration)}): more than one, so that coalescing batches. */
	private static final int WARM_UP_THREADS = 4;

	/** Rounds per warm-up thread at most: past C2's compile thresholds for the decision path's methods. */
	private static final int WARM_UP_ROUNDS = 2_500;

	/** Keys of the warm-up's throwaway limit. */
	private static final int WARM_UP_KEYS = 64;

	private static final String CREDENTIALS_ACTION = "set spring.data.redis.username and spring.data.redis.password "
			+ "(or spring.data.redis.url) to a user that may run EVALSHA, EVAL and SCRIPT LOAD on the rate limiter's keys";

	private final ScriptRunner runner;

	private final RedisConnectionFactory connectionFactory;

	private final LuaScripts scripts = LuaScripts.load();

	private final RedisKeys keys;

	private final long timeoutNanos;

	private final OnFailure onFailure;

	/** The limits that fail their own way ({@code rate-limit.policies.<name>.on-failure}), by limit id. */
	private final Map<String, OnFailure> onFailureByLimit;

	/** Whether the store or any limit falls back to the local store: then it is reset with the keys. */
	private final boolean usesLocal;

	/**
	 * The keys decided by the local store while Redis could not answer, each until its budget there would
	 * be whole again (by its limit's idle time): Redis never saw what they spent (see {@link #mirrored}).
	 * Bounded like the local store's tables.
	 */
	private final Cache<String, Limit> decidedLocally = Caffeine.newBuilder()
		.maximumSize(CaffeineRateLimitStore.DEFAULT_MAXIMUM_SIZE)
		.expireAfter(Expiry.<String, Limit>creating((key, limit) -> Duration.ofNanos(
				Math.min(limit.idleNanosUntilFresh(), Long.MAX_VALUE / 4))))
		.build();

	private final RateLimitStore localStore;

	private final int failureThreshold;

	private final long probeIntervalNanos;

	private final boolean failFast;

	private final String endpoint;

	private final RedisNode defaultNode;

	private final ConcurrentMap<String, RedisNode> nodes = new ConcurrentHashMap<>();

	private final List<Consumer<String>> nodeListeners = new CopyOnWriteArrayList<>();

	private final ThrottledLog answeredLog = new ThrottledLog(Duration.ofMinutes(1).toNanos(), System::nanoTime);

	private final CompletableFuture<@Nullable RedisError> startUpCheck;

	/** Whether Redis answered the start-up check, also after the start-up stopped waiting for it (late). */
	private final CompletableFuture<Boolean> answeredAtStartUp = new CompletableFuture<>();

	private final boolean clustered;

	private final @Nullable LongSupplier nowMicros;

	private final LongAdder errors = new LongAdder();

	private final LongAdder fallbacks = new LongAdder();

	private final LongAdder lateReplies = new LongAdder();

	private final LongAdder cachedRejections = new LongAdder();

	private final RejectionCache rejections;

	private final boolean coalescing;

	private final Coalescer coalescer;

	/** Coalesces give-backs as {@link #coalescer} does decisions, on lanes of their own. */
	private final Coalescer giveBacks;

	private final LongAdder giveBacksLost = new LongAdder();

	private final RedisOverrides overrides;
	private final long leaseExpiryNanos;

	/** Makes lease ids unique across instances: random per store, then a counter. */
	private final String leasePrefix = Long.toString(new java.security.SecureRandom().nextLong() & Long.MAX_VALUE, 36)
			+ ".";

	private final AtomicLong leaseCounter = new AtomicLong();

	/** The leases of concurrency limits this store holds, by acquisition (its identity: one per request). */
	private final ConcurrentMap<Identity, Lease> leases = new ConcurrentHashMap<>();

	private final ScheduledExecutorService leaseRefresher = Executors.newSingleThreadScheduledExecutor((runnable) -> {
		Thread thread = new Thread(runnable, "rate-limit-redis-lease-refresh");
		thread.setDaemon(true);
		return thread;
	});

	/** Gives back what late replies took: one thread, a bounded queue (an outage must not pile up work). */
	private final ThreadPoolExecutor compensator = new ThreadPoolExecutor(1, 1, 10, TimeUnit.SECONDS,
			new ArrayBlockingQueue<>(4096), (runnable) -> {
				Thread thread = new Thread(runnable, "rate-limit-redis-give-back");
				thread.setDaemon(true);
				return thread;
			});

	private RedisRateLimitStore(Builder builder, ScriptRunner runner) {
		this.runner = runner;
		this.connectionFactory = builder.connectionFactory;
		this.keys = new RedisKeys(builder.keyPrefix);
		this.timeoutNanos = builder.timeout.toNanos();
		this.onFailure = builder.onFailure;
		this.onFailureByLimit = Map.copyOf(builder.onFailureByLimit);
		this.usesLocal = this.onFailure == OnFailure.LOCAL || this.onFailureByLimit.containsValue(OnFailure.LOCAL);
		this.localStore = (builder.localStore != null) ? builder.localStore
				: new CaffeineRateLimitStore(CaffeineRateLimitStore.DEFAULT_MAXIMUM_SIZE, RateLimitClock.SYSTEM);
		this.failureThreshold = builder.failureThreshold;
		this.probeIntervalNanos = builder.probeInterval.toNanos();
		this.failFast = builder.failFast;
		this.endpoint = endpoint(builder.connectionFactory);
		this.defaultNode = newNode(this.endpoint);
		this.clustered = (builder.clustered != null) ? builder.clustered : isCluster(builder.connectionFactory);
		this.nowMicros = builder.nowMicros;
		// A test's clock jumps; the cache counts real time: no cache then.
		this.coalescing = builder.coalescing;
		this.coalescer = new Coalescer(this::sendBatch, this.timeoutNanos, Coalescer.MAX_IN_FLIGHT);
		this.giveBacks = new Coalescer(this::sendGiveBacks, this.timeoutNanos, Coalescer.MAX_IN_FLIGHT);
		this.rejections = new RejectionCache((builder.nowMicros != null) ? 0 : builder.rejectionCacheMaxAge.toNanos());
		this.overrides = new RedisOverrides(builder.connectionFactory, builder.keyPrefix, builder.overridesPollInterval,
				this.rejections::clear);
		this.leaseExpiryNanos = builder.leaseExpiry.toNanos();
		if (builder.refreshLeases) {
			long every = Math.max(1_000_000L, this.leaseExpiryNanos / 3);
			this.leaseRefresher.scheduleWithFixedDelay(this::refreshLeases, every, every, TimeUnit.NANOSECONDS);
		}
		runner.warmUp(this.scripts.all());
		this.startUpCheck = checkAtStartUp(builder.failFast ? FAIL_FAST_CHECK : START_UP_CHECK);
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
		return release(acquisition, deadline());
	}

	private Decision release(Acquisition acquisition, long deadline) {
		if (isConcurrency(acquisition)) {
			return releaseSlot(acquisition, deadline);
		}
		this.rejections.drop(acquisition.limitId(), acquisition.key());
		return decide(List.of(acquisition), RELEASE, deadline).get(0);
	}

	/**
	 * Gives back a request's slot where it was taken: its lease in Redis (a failure leaves it to expire),
	 * the local store (on-failure: local), or nowhere (on-failure allowed it without a slot).
	 */
	private Decision releaseSlot(Acquisition acquisition, long deadline) {
		Lease lease = this.leases.remove(new Identity(acquisition));
		Limit limit = acquisition.limit();
		if (lease == null || lease.where == Lease.NOWHERE) {
			return Decision.allowed(limit.limit(), limit.limit(), 0, 0);
		}
		if (lease.where == Lease.LOCAL) {
			return this.localStore.release(acquisition);
		}
		return decide(List.of(acquisition), RELEASE, deadline, new Lease[] { lease }, null).get(0);
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
	 * Reads a budget without changing it (one script call): what an operator reads (the actuator), so a
	 * budget Redis did not show is never made up by {@code on-failure}.
	 * @throws IllegalStateException when Redis does not answer in time, or answers an error
	 */
	@Override
	public Decision peek(Acquisition acquisition) {
		List<Acquisition> acquisitions = List.of(acquisition);
		byte[][] keys = keys(acquisitions);
		long sent = System.nanoTime();
		try {
			ReplyPart reply = ReplyPart.of(this.runner.run(this.scripts.forAcquisitions(acquisitions), keys,
					args(acquisitions, PEEK, NO_DEADLINE, null), deadline(), null));
			learnClock(node(keys[0]), sent, reply);
			return decisions(acquisitions, reply).get(0);
		}
		catch (Exception ex) {
			if (ex instanceof InterruptedException) {
				Thread.currentThread().interrupt();
			}
			this.errors.increment();
			throw new IllegalStateException(
					"Cannot read " + redisKey(acquisition.limitId(), acquisition.key()) + ": Redis did not answer", ex);
		}
	}

	/**
	 * Deletes the budget's key, so it is whole again (and forgets it in the local fallback store, if
	 * any).
	 * @throws IllegalStateException when Redis does not answer in time
	 */
	@Override
	public void reset(String limitId, String key) {
		this.rejections.drop(limitId, key);
		if (this.usesLocal) {
			this.localStore.reset(limitId, key);
			this.decidedLocally.invalidate(limitId + '\n' + key);
		}
		try {
			this.runner.run(RESET, new byte[][] { this.keys.key(limitId, key) }, new byte[0][], deadline(), null);
		}
		catch (Exception ex) {
			if (ex instanceof InterruptedException) {
				Thread.currentThread().interrupt();
			}
			this.errors.increment();
			throw new IllegalStateException("Cannot reset " + redisKey(limitId, key) + ": Redis did not answer", ex);
		}
		// Tokens came back: every instance forgets its rejections within the poll interval.
		this.overrides.touch();
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
	 * Returns the Redis key of the hash that keeps runtime changes of policies.
	 * @return {@code <keyPrefix>{overrides}}
	 */
	String overridesKey() {
		return this.overrides.hashKey();
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
		if (this.usesLocal) {
			this.localStore.resetAll();
			this.decidedLocally.invalidateAll();
		}
		try {
			NamespaceReset.unlinkAll(this.connectionFactory, this.keys.pattern());
		}
		catch (RuntimeException ex) {
			this.errors.increment();
			throw new IllegalStateException("Cannot reset the budgets of " + new String(this.keys.pattern(), StandardCharsets.UTF_8) + ": " + ex.getMessage(), ex);
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
					decisions.set(i, release(acquisitions.get(i), deadline));
				}
			}
		}
		return decisions;
	}

	/**
	 * Takes tokens from several budgets, all or nothing, as {@link #tryAcquireAll(List)} does (the same
	 * script calls), with a receipt per acquisition whose mark is computed from its decision and the time
	 * the script read (see {@link #mark}). A receipt says where the cost was taken: {@code STORE} when Redis
	 * decided, {@code LOCAL} when the local store did ({@code on-failure: local}, with that store's receipt
	 * and mark), {@code NOWHERE} when {@code on-failure} let the request through ({@code allow}) or refused it
	 * ({@code deny}), and for the acquisitions of a request another budget rejected (given back at once:
	 * nothing is held). Concurrency limits keep no mark: their slots come back with their release.
	 */
	@Override
	public List<Receipt> admitAll(List<Acquisition> acquisitions) {
		List<Receipt> receipts = admitInRedis(acquisitions);
		return this.usesLocal ? mirrored(receipts) : receipts;
	}

	private List<Receipt> admitInRedis(List<Acquisition> acquisitions) {
		long deadline = deadline();
		if (acquisitions.size() <= 1 || !this.clustered || sameSlot(acquisitions)) {
			Admission admission = new Admission();
			return receipts(acquisitions, decide(acquisitions, ACQUIRE, deadline, admission), admission);
		}
		List<Receipt> receipts = new ArrayList<>(acquisitions.size());
		boolean rejected = false;
		for (Acquisition acquisition : acquisitions) {
			Admission admission = new Admission();
			List<Acquisition> one = List.of(acquisition);
			Receipt receipt = receipts(one, decide(one, ACQUIRE, deadline, admission), admission).get(0);
			receipts.add(receipt);
			rejected |= !receipt.decision().isAllowed();
		}
		if (rejected) {
			// Compensation (see tryAcquireAll), each where it was taken; nothing is held afterwards.
			for (int i = 0; i < receipts.size(); i++) {
				Receipt receipt = receipts.get(i);
				Acquisition acquisition = receipt.acquisition();
				if (receipt.holdsCost()) {
					receipts.set(i, new Receipt(acquisition, compensate(receipt, deadline), Receipt.NO_MARK,
							Receipt.Place.NOWHERE));
				}
			}
		}
		return receipts;
	}

	/**
	 * Gives back, before the rejected request is answered (within its deadline), what one of its budgets
	 * took in another slot: by its receipt, exactly, where it was taken. A concurrency limit's release
	 * finds where its slot was taken on its own (its lease).
	 */
	private Decision compensate(Receipt receipt, long deadline) {
		Decision after = giveBack(receipt, deadline, true);
		return (after != null) ? after : receipt.decision();
	}

	/**
	 * Takes what Redis admitted for a limit with {@code on-failure: local} in the local store as well, so
	 * that when Redis goes away the local budget already holds what this instance admitted. And for a
	 * key this instance decided locally while Redis could not answer (within the time its budget needs to
	 * be whole again), Redis' admission stands only when the local store allows it too: what the local
	 * store admitted meanwhile, which Redis never saw, is not handed out again. An instance flapping
	 * between Redis and its local store so never hands out the limit in both. For any other key the local
	 * store only records: with Redis answering, its table, full of a flood's keys, refuses nobody.
	 */
	private List<Receipt> mirrored(List<Receipt> receipts) {
		List<Receipt> mirrored = null;
		boolean refused = false;
		for (int i = 0; i < receipts.size(); i++) {
			Receipt receipt = receipts.get(i);
			Acquisition acquisition = receipt.acquisition();
			if (receipt.place() != Receipt.Place.STORE || !receipt.holdsCost() || !isMirrored(acquisition)) {
				continue;
			}
			if (mirrored == null) {
				mirrored = new ArrayList<>(receipts);
			}
			Receipt mirror = this.localStore.admitAll(List.of(acquisition)).get(0);
			if (mirror.holdsCost()) {
				mirrored.set(i, new Receipt(acquisition, receipt.decision(), receipt.mark(), receipt.place(), mirror));
			}
			else if (this.decidedLocally.getIfPresent(localKey(acquisition)) != null) {
				refused = true;
				mirrored.set(i, new Receipt(acquisition, mirror.decision(), Receipt.NO_MARK, Receipt.Place.LOCAL));
			}
		}
		if (mirrored == null) {
			return receipts;
		}
		if (!refused) {
			return mirrored;
		}
		// All or nothing: what the others took, in Redis and locally, is given back.
		for (int i = 0; i < mirrored.size(); i++) {
			Receipt receipt = mirrored.get(i);
			if (receipt.holdsCost()) {
				giveBack(receipt);
				mirrored.set(i, new Receipt(receipt.acquisition(), receipt.decision(), Receipt.NO_MARK, Receipt.Place.NOWHERE));
			}
			else if (receipt.place() == Receipt.Place.LOCAL) {
				// The refusing one: Redis took its cost, which goes back.
				giveBack(receipts.get(i));
			}
		}
		return mirrored;
	}

	/** Remembers the keys decided locally, while Redis could not answer (see {@link #mirrored}). */
	private void decidedLocally(List<Receipt> receipts) {
		for (Receipt receipt : receipts) {
			if (receipt.place() == Receipt.Place.LOCAL) {
				this.decidedLocally.put(localKey(receipt.acquisition()), receipt.acquisition().limit());
			}
		}
	}

	private static String localKey(Acquisition acquisition) {
		return acquisition.limitId() + '\n' + acquisition.key();
	}

	private boolean isMirrored(Acquisition acquisition) {
		return !isConcurrency(acquisition) && onFailure(acquisition) == OnFailure.LOCAL;
	}

	/**
	 * Gives back what an admitted acquisition still holds (see {@link Receipt}) without waiting: taken in
	 * Redis, a give-back script call is sent asynchronously, coalesced with others of its lane as decisions
	 * are, and this method returns {@code null} at once; taken in the local store, that store gives back.
	 * This instance's cached rejection of the key is dropped at once (and again when Redis answered); other
	 * instances keep theirs at most their rejection cache's age. A give-back that fails, times out or meets
	 * an open breaker leaves the attempt charged (never generous): it is logged at debug, and a failed call
	 * is counted in {@link #errors()} (not by the node's breaker: a give-back holds no request thread).
	 */
	@Override
	public @Nullable Decision giveBack(Receipt receipt) {
		return giveBack(receipt, deadline(), false);
	}

	/**
	 * Gives back where the cost was taken: a slot by its release (a receipt gives one back only for a
	 * request refused after it was taken; its lease knows where), the local store's part (the local
	 * fallback, or the mirror), and Redis' part by a give-back call, awaited until {@code deadline} only
	 * when {@code await} (a rejected request's compensation, before it is answered).
	 */
	private @Nullable Decision giveBack(Receipt receipt, long deadline, boolean await) {
		Acquisition acquisition = receipt.acquisition();
		if (isConcurrency(acquisition)) {
			return receipt.holdsCost() ? release(acquisition, deadline) : null;
		}
		Receipt mirror = receipt.mirror();
		if (mirror != null) {
			this.localStore.giveBack(mirror);
		}
		if (receipt.place() == Receipt.Place.LOCAL) {
			return receipt.holdsCost() ? this.localStore
				.giveBack(new Receipt(acquisition, receipt.decision(), receipt.mark(), Receipt.Place.STORE)) : null;
		}
		CompletableFuture<Long> inRedis = giveBackInRedis(receipt);
		if (await) {
			try {
				inRedis.get(ScriptRunner.remaining(deadline), TimeUnit.NANOSECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			catch (ExecutionException | TimeoutException ex) {
				// Still on its way (or lost: the attempt stays charged, never generous).
			}
		}
		return null;
	}

	/**
	 * Sends a give-back of a receipt of Redis' (see {@link #giveBack(Receipt)}).
	 * @param receipt any receipt
	 * @return completed with what the script gave back (tokens, or a bucket's microseconds) once Redis
	 * answered, with {@code 0} at once when nothing is held in Redis, with {@code -1} when the give-back
	 * did not reach Redis; never exceptionally
	 */
	CompletableFuture<Long> giveBackInRedis(Receipt receipt) {
		Acquisition acquisition = receipt.acquisition();
		if (!receipt.holdsCost() || receipt.place() != Receipt.Place.STORE || receipt.mark() == Receipt.NO_MARK
				|| acquisition.cost() == 0 || isConcurrency(acquisition)) {
			// Nothing held in Redis; a concurrency limit's slot comes back with its release.
			return CompletableFuture.completedFuture(0L);
		}
		this.rejections.drop(acquisition.limitId(), acquisition.key());
		List<Acquisition> acquisitions = List.of(acquisition);
		byte[][] keys = keys(acquisitions);
		RedisNode node = node(keys[0]);
		if (!node.breaker().tryPass()) {
			this.giveBacksLost.increment();
			logger.debug("Redis rate limit store did not give back " + redisKey(acquisition.limitId(), acquisition.key())
					+ ": " + node.name() + " is failing; the attempt stays charged");
			return CompletableFuture.completedFuture(-1L);
		}
		Coalescer.Pending pending = new Coalescer.Pending(acquisitions, keys, ServerClock.NONE, NO_DEADLINE,
				receipt.mark());
		long sent = System.nanoTime();
		CompletableFuture<ReplyPart> reply;
		if (this.coalescing && this.runner.canSend()) {
			this.giveBacks.submit(this.clustered ? ClusterSlotHashUtil.calculateSlot(keys[0]) : 0, pending);
			reply = pending.reply;
		}
		else {
			reply = sendGiveBack(pending);
		}
		// Bounded as any call: a lost give-back is an error, the attempt stays charged.
		return reply.orTimeout(this.timeoutNanos, TimeUnit.NANOSECONDS)
			.handle((part, failure) -> givenBack(node, pending, sent, part, failure));
	}

	/** A give-back sent on its own (coalescing off): without blocking, or on the compensation thread (Jedis). */
	private CompletableFuture<ReplyPart> sendGiveBack(Coalescer.Pending pending) {
		// A call of its own: its failure counts.
		pending.batch = new Coalescer.Batch(1);
		LuaScript script = this.scripts.giveBack();
		byte[][] args = giveBackArgs(List.of(pending));
		CompletableFuture<List<Long>> sent = this.runner.canSend() ? this.runner.send(script, pending.keys, args) : null;
		if (sent != null) {
			return sent.thenApply(ReplyPart::of);
		}
		CompletableFuture<ReplyPart> reply = new CompletableFuture<>();
		try {
			this.compensator.execute(() -> {
				try {
					reply.complete(ReplyPart.of(
							this.runner.run(script, pending.keys, args, System.nanoTime() + this.timeoutNanos, null)));
				}
				catch (Exception ex) {
					if (ex instanceof InterruptedException) {
						Thread.currentThread().interrupt();
					}
					reply.completeExceptionally(ex);
				}
			});
		}
		catch (RejectedExecutionException ex) {
			reply.completeExceptionally(ex);
		}
		return reply;
	}

	/** Sends one script call for coalesced give-backs, one acquisition each (see give-back.lua). */
	private @Nullable CompletableFuture<List<Long>> sendGiveBacks(List<Coalescer.Pending> requests) {
		byte[][] keys = new byte[requests.size()][];
		for (int i = 0; i < keys.length; i++) {
			keys[i] = requests.get(i).keys[0];
		}
		return this.runner.send(this.scripts.giveBack(), keys, giveBackArgs(requests));
	}

	private byte[][] giveBackArgs(List<Coalescer.Pending> requests) {
		byte[][] args = new byte[3 + 7 * requests.size()][];
		args[0] = (this.nowMicros != null) ? number(this.nowMicros.getAsLong()) : SERVER_TIME;
		args[1] = GIVE_BACK;
		// A late give-back is harmless: it gives back only what is still held when it runs.
		args[2] = NO_DEADLINE;
		int i = 3;
		for (Coalescer.Pending pending : requests) {
			i = acquisitionArgs(args, i, pending.acquisitions.get(0), GIVE_BACK, null);
			// The max wait's place carries the mark.
			args[i - 5] = number(pending.mark);
		}
		return args;
	}

	/** A give-back's outcome, on the client's (or the timer's) thread. */
	private long givenBack(RedisNode node, Coalescer.Pending pending, long sent, @Nullable ReplyPart reply,
			@Nullable Throwable failure) {
		Acquisition acquisition = pending.acquisitions.get(0);
		if (failure == null && reply != null && reply.size() == 1) {
			learnClock(node, sent, reply);
			onAnswer(node);
			// A rejection cached while the give-back was under way was answered before it ran.
			this.rejections.drop(acquisition.limitId(), acquisition.key());
			return reply.get(0);
		}
		if (failure == null) {
			failure = new IllegalStateException("Unexpected reply from a rate limit script: " + reply);
		}
		Throwable cause = (failure instanceof CompletionException && failure.getCause() != null) ? failure.getCause()
				: failure;
		// Still waiting for its lane: never sent now.
		pending.abandoned = true;
		this.giveBacksLost.increment();
		Coalescer.Batch batch = pending.batch;
		if (batch != null && batch.countFailure()) {
			// Once per call, as decisions count theirs; but not for the breaker, which spares request
			// threads the timeout of a Redis that is away: a give-back holds none, and a busy instance that
			// reads its replies late must not have its decisions sent to on-failure for that.
			this.errors.increment();
			node.countError();
		}
		if (logger.isDebugEnabled()) {
			logger.debug("Redis rate limit store could not give back " + redisKey(acquisition.limitId(), acquisition.key())
					+ " on " + node.name() + "; the attempt stays charged", cause);
		}
		return -1;
	}

	/**
	 * Receipts of one decided request (one script call, or on-failure).
	 */
	private List<Receipt> receipts(List<Acquisition> acquisitions, List<Decision> decisions, Admission admission) {
		boolean allowed = true;
		for (Decision decision : decisions) {
			allowed &= decision.isAllowed();
		}
		List<Receipt> fallback = admission.fallback;
		if (fallback != null) {
			return fallback;
		}
		List<Receipt> receipts = new ArrayList<>(acquisitions.size());
		for (int i = 0; i < acquisitions.size(); i++) {
			Acquisition acquisition = acquisitions.get(i);
			Decision decision = decisions.get(i);
			if (!allowed && decision.isAllowed()) {
				// Given back at once (all or nothing: another budget rejected).
				receipts.add(new Receipt(acquisition, decision, Receipt.NO_MARK, Receipt.Place.NOWHERE));
			}
			else if (!decision.isAllowed()) {
				receipts.add(new Receipt(acquisition, decision, Receipt.NO_MARK, Receipt.Place.STORE));
			}
			else {
				receipts.add(new Receipt(acquisition, decision, mark(acquisition, decision, admission.now),
						Receipt.Place.STORE));
			}
		}
		return receipts;
	}

	/**
	 * Where an admitted acquisition took its cost, in the scripts' time (epoch microseconds), from its
	 * decision's reset and the time the script read: the tat it wrote (buckets), its window's end (fixed
	 * window), its entries' timestamp (log), its window's start (window counter; {@code reset} is
	 * {@code overlap + period} once the window counts anything).
	 * @param acquisition an admitted acquisition of a cost above zero
	 * @param decision Redis' decision on it
	 * @param now the time the script read
	 * @return the mark; {@link Receipt#NO_MARK} for a concurrency limit or a cost of zero
	 */
	static long mark(Acquisition acquisition, Decision decision, long now) {
		Limit limit = acquisition.limit();
		long reset = decision.resetNanos() / 1000;
		if (acquisition.cost() == 0) {
			return Receipt.NO_MARK;
		}
		return switch (limit.algorithm()) {
			case TOKEN_BUCKET, LEAKY_BUCKET, FIXED_WINDOW -> now + reset;
			case SLIDING_WINDOW_LOG -> now + reset - micros(limit.period().toNanos());
			case SLIDING_WINDOW_COUNTER -> now + reset - 2 * micros(limit.period().toNanos());
			case CONCURRENCY -> Receipt.NO_MARK;
		};
	}

	/** What a decision tells {@link #admitAll} besides the decisions. */
	private static final class Admission {

		/** Where the decisions were made: Redis, or nowhere (on-failure allow or deny). */
		Receipt.Place place = Receipt.Place.STORE;

		/** The time the script read (epoch microseconds), when Redis decided. */
		long now;

		/** The receipts on-failure made, one per acquisition, when Redis did not decide. */
		@Nullable List<Receipt> fallback;

	}

	/**
	 * Returns how many give-backs did not reach Redis (a failed or late call, an open breaker): their
	 * attempts stay charged.
	 * @return the count
	 */
	long giveBacksLost() {
		return this.giveBacksLost.sum();
	}

	/**
	 * Warms the decision path before the application takes traffic: scripts loaded and the connection open
	 * (both started by {@link Builder#build()}), then, on {@value #WARM_UP_THREADS} threads at once so
	 * that coalescing batches too, up to {@value #WARM_UP_ROUNDS} rounds each of a decision, an admission
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
		if (budget.isNegative() || budget.isZero()) {
			return 0;
		}
		long end = System.nanoTime() + budget.toNanos();
		try {
			// A first connection of a cold JVM may take longer than the start-up waited: within the budget, wait for it.
			if (!this.answeredAtStartUp.get(budget.toNanos(), TimeUnit.NANOSECONDS)) {
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
		long fallbacksBefore = fallbacks();
		String limitId = "warm-up." + this.leasePrefix + Long.toString(System.nanoTime() & 0xffffff, 36);
		Limit limit = Limit.builder().limit(1_000_000).period(Duration.ofSeconds(1)).build();
		AtomicInteger answered = new AtomicInteger();
		Runnable rounds = () -> {
			for (int round = 0; round < WARM_UP_ROUNDS && System.nanoTime() - end < 0 && fallbacks() == fallbacksBefore;
					round++) {
				Acquisition acquisition = new Acquisition(limitId, limit, "k" + (round % WARM_UP_KEYS), 1);
				tryAcquire(acquisition);
				Receipt receipt = admitAll(List.of(acquisition)).get(0);
				if (fallbacks() != fallbacksBefore) {
					return;
				}
				answered.addAndGet(2);
				if (receipt.mirror() != null) {
					this.localStore.giveBack(receipt.mirror());
				}
				// 0: Redis answered that nothing is held any more (the bucket refilled within microseconds); -1: no answer.
				if (giveBackInRedis(receipt).join() >= 0) {
					answered.incrementAndGet();
				}
			}
		};
		List<Thread> threads = new ArrayList<>(WARM_UP_THREADS);
		for (int i = 0; i < WARM_UP_THREADS; i++) {
			Thread thread = new Thread(rounds, "rate-limit-redis-warm-up-" + i);
			thread.setDaemon(true);
			thread.start();
			threads.add(thread);
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
		if (fallbacks() == fallbacksBefore) {
			for (int i = 0; i < WARM_UP_KEYS; i++) {
				try {
					reset(limitId, "k" + i);
				}
				catch (RuntimeException ex) {
					// expires within milliseconds anyway
					break;
				}
			}
		}
		return answered.get();
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
	 * Returns whether the breakers let requests reach Redis.
	 * @return {@code true} unless Redis (on a cluster, one of its masters) has been failing and its breaker
	 * is open (or probing)
	 */
	public boolean isAvailable() {
		if (this.defaultNode.breaker().state() != CircuitBreaker.State.CLOSED) {
			return false;
		}
		for (RedisNode node : this.nodes.values()) {
			if (node.breaker().state() != CircuitBreaker.State.CLOSED) {
				return false;
			}
		}
		return true;
	}

	/**
	 * Calls a listener with the name of every Redis node the store has sent calls to, now and as it meets
	 * more (on Redis Cluster with Lettuce, each master; otherwise the one endpoint), e.g. to register
	 * metrics per node.
	 * @param listener called with {@code host:port} (or a description of the endpoint), on the thread
	 * that meets the node
	 */
	public void onNode(Consumer<String> listener) {
		this.nodeListeners.add(listener);
		listener.accept(this.defaultNode.name());
		this.nodes.keySet().forEach(listener);
	}

	/**
	 * Returns how many calls to one node failed since start.
	 * @param node a name given to an {@link #onNode(Consumer)} listener
	 * @return the count, 0 for a node the store does not know
	 */
	public long errors(String node) {
		RedisNode found = found(node);
		return (found != null) ? found.errors() : 0;
	}

	/**
	 * Returns whether one node's breaker lets requests for its keys reach it.
	 * @param node a name given to an {@link #onNode(Consumer)} listener
	 * @return {@code false} while that node has been failing and its breaker is open (or probing)
	 */
	public boolean isAvailable(String node) {
		RedisNode found = found(node);
		return found == null || found.breaker().state() == CircuitBreaker.State.CLOSED;
	}

	private @Nullable RedisNode found(String node) {
		return this.defaultNode.name().equals(node) ? this.defaultNode : this.nodes.get(node);
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

	/**
	 * Returns how many replies came after their decision was made by on-failure, with tokens taken,
	 * and were given back.
	 * @return the count
	 */
	long lateReplies() {
		return this.lateReplies.sum();
	}

	/**
	 * Returns how many rejections were answered from the in-process cache of rejections Redis made, without
	 * a call to Redis.
	 * @return the count
	 */
	long cachedRejections() {
		return this.cachedRejections.sum();
	}

	/**
	 * Returns how many leases of concurrency limits this store holds in Redis now (one per request in
	 * flight), which its refresher keeps alive.
	 * @return the count
	 */
	long leasesHeld() {
		return this.leases.values().stream().filter((lease) -> lease.where == Lease.REDIS).count();
	}

	/**
	 * Gives every lease this store holds in Redis a new expiry: one script call per hash slot (per
	 * {@value #REFRESH_BATCH} keys), each waiting at most {@code timeout}. A call that fails leaves those
	 * leases to the next refresh, and to their expiry.
	 */
	void refreshLeases() {
		try {
			Map<Integer, Map<String, List<Lease>>> bySlot = new java.util.HashMap<>();
			for (Lease lease : this.leases.values()) {
				if (lease.where == Lease.REDIS) {
					int slot = this.clustered ? ClusterSlotHashUtil.calculateSlot(lease.key) : 0;
					bySlot.computeIfAbsent(slot, (s) -> new java.util.LinkedHashMap<>())
						.computeIfAbsent(new String(lease.key, StandardCharsets.UTF_8), (k) -> new ArrayList<>())
						.add(lease);
				}
			}
			for (Map<String, List<Lease>> byKey : bySlot.values()) {
				List<List<Lease>> batch = new ArrayList<>();
				for (List<Lease> ofKey : byKey.values()) {
					batch.add(ofKey);
					if (batch.size() == REFRESH_BATCH) {
						refresh(batch);
						batch = new ArrayList<>();
					}
				}
				if (!batch.isEmpty()) {
					refresh(batch);
				}
			}
		}
		catch (RuntimeException ex) {
			// The scheduler must keep running: the next refresh tries again.
			logger.debug("Redis rate limit store could not refresh its leases", ex);
		}
	}

	private static final int REFRESH_BATCH = 256;

	private void refresh(List<List<Lease>> byKey) {
		byte[][] keys = new byte[byKey.size()][];
		List<byte[]> args = new ArrayList<>();
		args.add((this.nowMicros != null) ? number(this.nowMicros.getAsLong()) : SERVER_TIME);
		args.add(number(micros(this.leaseExpiryNanos)));
		for (int i = 0; i < keys.length; i++) {
			List<Lease> ofKey = byKey.get(i);
			keys[i] = ofKey.get(0).key;
			args.add(number(ofKey.size()));
			for (Lease lease : ofKey) {
				args.add(bytes(lease.id));
				args.add(number(lease.cost));
			}
		}
		RedisNode node = node(keys[0]);
		long sent = System.nanoTime();
		try {
			List<Long> reply = this.runner.run(this.scripts.leaseRefresh(), keys, args.toArray(byte[][]::new),
					sent + this.timeoutNanos, null);
			learnClock(node, sent, ReplyPart.of(reply));
			onAnswer(node);
		}
		catch (Exception ex) {
			if (ex instanceof InterruptedException) {
				Thread.currentThread().interrupt();
			}
			onError(node, ex);
		}
	}

	@Override
	public void close() {
		this.overrides.close();
		// Leases this store still holds are not given back: like a crashed instance's, they expire.
		this.leaseRefresher.shutdownNow();
		this.compensator.shutdown();
		try {
			this.compensator.awaitTermination(this.timeoutNanos * 2, TimeUnit.NANOSECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		this.runner.close();
	}

	private long deadline() {
		return System.nanoTime() + this.timeoutNanos;
	}

	private List<Decision> decide(List<Acquisition> acquisitions, byte[] op, long deadline) {
		return decide(acquisitions, op, deadline, (Admission) null);
	}

	/**
	 * Decides with Redis, or on-failure.
	 * @param admission when not {@code null}, told where the decisions were made (for receipts)
	 */
	private List<Decision> decide(List<Acquisition> acquisitions, byte[] op, long deadline, @Nullable Admission admission) {
		if (op != ACQUIRE || !anyConcurrency(acquisitions)) {
			return decide(acquisitions, op, deadline, null, admission);
		}
		Lease[] leases = new Lease[acquisitions.size()];
		for (int i = 0; i < leases.length; i++) {
			Acquisition acquisition = acquisitions.get(i);
			if (isConcurrency(acquisition)) {
				leases[i] = new Lease(this.leasePrefix + this.leaseCounter.incrementAndGet(),
						this.keys.key(acquisition.limitId(), acquisition.key()), acquisition.cost());
				// Registered before the call, so that a refresh never misses a lease Redis has granted.
				this.leases.put(new Identity(acquisition), leases[i]);
			}
		}
		List<Decision> decisions = decide(acquisitions, op, deadline, leases, admission);
		boolean allowed = decisions.stream().allMatch(Decision::isAllowed);
		for (int i = 0; i < leases.length; i++) {
			if (leases[i] != null && !allowed) {
				// All or nothing: a rejected request holds no slot (the script, or the local store, gave it back).
				this.leases.remove(new Identity(acquisitions.get(i)));
			}
		}
		return decisions;
	}

	/**
	 * Decides with Redis, or on-failure.
	 * @param leases per acquisition, the lease of a concurrency limit (else {@code null}); {@code null}
	 * when none is of a concurrency limit
	 * @param admission when not {@code null}, told where the decisions were made and the time Redis read
	 */
	private List<Decision> decide(List<Acquisition> acquisitions, byte[] op, long deadline, Lease @Nullable [] leases,
			@Nullable Admission admission) {
		// Never for a concurrency limit (RejectionCache#applies): its slots come back when requests end.
		boolean cacheable = op == ACQUIRE && acquisitions.size() == 1 && this.rejections.applies(acquisitions.get(0));
		if (cacheable) {
			Decision cached = this.rejections.find(acquisitions.get(0), System.nanoTime());
			if (cached != null) {
				this.cachedRejections.increment();
				return List.of(cached);
			}
		}
		byte[][] keys = keys(acquisitions);
		RedisNode node = node(keys[0]);
		if (!node.breaker().tryPass()) {
			return fallback(acquisitions, op, leases, admission);
		}
		// Only acquisitions charge: they carry a deadline in the node's time, and a late reply that shows
		// tokens taken anyway is given back. A late release or check is harmless.
		boolean acquire = op == ACQUIRE;
		long serverDeadline = (acquire && this.nowMicros == null) ? node.clock().deadlineMicros(deadline) : ServerClock.NONE;
		// The script of the operation, which also gives back what a late reply took; an acquisition is sent
		// with LuaScripts#forAcquire's.
		LuaScript script = (op == CHECK) ? this.scripts.check() : this.scripts.forAcquisitions(acquisitions);
		ReplyPart reply;
		long sent = System.nanoTime();
		try {
			// Never coalesced with a concurrency limit: each acquisition carries its own lease.
			reply = (acquire && leases == null && this.coalescing && this.runner.canSend()
					&& (!this.clustered || sameSlot(acquisitions)))
					? coalesced(node, script, keys, acquisitions, serverDeadline, deadline)
					: ReplyPart.of(this.runner.run(acquire ? this.scripts.forAcquire(acquisitions) : script, keys,
							args(acquisitions, op, deadlineArg(serverDeadline), leases), deadline,
							acquire ? (late) -> readLate(node, serverDeadline, script, keys, acquisitions, leases, ReplyPart.of(late)) : null));
			learnClock(node, sent, reply);
			if (reply.isPastDeadline()) {
				throw new TimeoutException("Redis ran the call after its deadline");
			}
		}
		catch (CountedElsewhere ex) {
			// Another request of the same coalesced call reported its failure: once per call, not per request.
			return fallback(acquisitions, op, leases, admission);
		}
		catch (Exception ex) {
			if (ex instanceof InterruptedException) {
				Thread.currentThread().interrupt();
			}
			onError(node, ex);
			return fallback(acquisitions, op, leases, admission);
		}
		onAnswer(node);
		if (admission != null) {
			admission.now = reply.serverTime();
		}
		List<Decision> decisions = decisions(acquisitions, reply);
		if (cacheable && !decisions.get(0).isAllowed()) {
			this.rejections.put(acquisitions.get(0), decisions.get(0), sent);
		}
		return decisions;
	}

	/**
	 * Decides with the next call of the key's lane (see {@link Coalescer}): at once when the lane is idle.
	 */
	private ReplyPart coalesced(RedisNode node, LuaScript script, byte[][] keys, List<Acquisition> acquisitions,
			long serverDeadline, long deadline) throws Exception {
		// The deadline's argument is written here, on the caller's thread, not on the client's one that sends batches.
		Coalescer.Pending pending = new Coalescer.Pending(acquisitions, keys, serverDeadline, deadlineArg(serverDeadline));
		this.coalescer.submit(this.clustered ? ClusterSlotHashUtil.calculateSlot(keys[0]) : 0, pending);
		try {
			return pending.reply.get(ScriptRunner.remaining(deadline), TimeUnit.NANOSECONDS);
		}
		catch (TimeoutException | InterruptedException ex) {
			pending.abandoned = true;
			pending.reply.thenAccept((late) -> readLate(node, serverDeadline, script, keys, acquisitions, null, late));
			Coalescer.Batch batch = pending.batch;
			if (batch == null || !batch.countFailure()) {
				// Never sent (its lane was busy) or its call's failure is counted by another request.
				if (ex instanceof InterruptedException) {
					Thread.currentThread().interrupt();
				}
				throw new CountedElsewhere();
			}
			throw ex;
		}
		catch (ExecutionException ex) {
			Coalescer.Batch batch = pending.batch;
			if (batch != null && !batch.countFailure()) {
				throw new CountedElsewhere();
			}
			throw (ex.getCause() instanceof Exception cause) ? cause : ex;
		}
	}

	/**
	 * Sends one script call for coalesced requests. A request alone goes in the plain format (as an
	 * uncoalesced call): its deadline and its acquisitions' values. Several go in the batch format: the
	 * earliest deadline, each distinct limit's values once, each distinct acquisition (limit, cost, maximum
	 * wait) once, then per request its deadline, its number of acquisitions and, per acquisition, the index
	 * of its shape (see driver.lua).
	 */
	private @Nullable CompletableFuture<List<Long>> sendBatch(List<Coalescer.Pending> requests) {
		if (requests.size() == 1) {
			// Alone (the lane was idle): the plain format, whose reply is the request's own (Coalescer#split).
			Coalescer.Pending pending = requests.get(0);
			return this.runner.send(this.scripts.forAcquire(pending.acquisitions), pending.keys,
					args(pending.acquisitions, ACQUIRE, pending.deadlineArg, null));
		}
		if (isOneBucketShape(requests)) {
			return sendOneBucketShape(requests);
		}
		List<Acquisition> all = new ArrayList<>();
		List<Limit> limits = new ArrayList<>(4);
		// Per distinct shape: its limit's index, cost and maximum wait (us), 3 longs each.
		long[] shapes = new long[12];
		int shapeCount = 0;
		int keyCount = 0;
		long earliest = Long.MAX_VALUE;
		int[] shapeOf = new int[16];
		for (Coalescer.Pending pending : requests) {
			keyCount += pending.keys.length;
			if (pending.serverDeadline != ServerClock.NONE) {
				earliest = Math.min(earliest, pending.serverDeadline);
			}
			for (Acquisition acquisition : pending.acquisitions) {
				int limit = indexOf(limits, acquisition.limit());
				if (limit < 0) {
					limit = limits.size();
					limits.add(acquisition.limit());
				}
				long cost = acquisition.cost();
				long maxWait = acquisition.maxWaitNanos() / 1000;
				int shape = 0;
				while (shape < shapeCount && (shapes[3 * shape] != limit || shapes[3 * shape + 1] != cost
						|| shapes[3 * shape + 2] != maxWait)) {
					shape++;
				}
				if (shape == shapeCount) {
					if (3 * shapeCount + 3 > shapes.length) {
						shapes = java.util.Arrays.copyOf(shapes, 2 * shapes.length);
					}
					shapes[3 * shape] = limit;
					shapes[3 * shape + 1] = cost;
					shapes[3 * shape + 2] = maxWait;
					shapeCount++;
				}
				if (all.size() == shapeOf.length) {
					shapeOf = java.util.Arrays.copyOf(shapeOf, 2 * shapeOf.length);
				}
				shapeOf[all.size()] = shape;
				all.add(acquisition);
			}
		}
		byte[][] keys = new byte[keyCount][];
		byte[][] args = new byte[6 + 5 * limits.size() + 3 * shapeCount + 2 * requests.size() + all.size()][];
		args[0] = (this.nowMicros != null) ? number(this.nowMicros.getAsLong()) : SERVER_TIME;
		args[1] = BATCH;
		args[2] = number(requests.size());
		// The earliest deadline of the requests that have one: before it, the script reads no request's own.
		args[3] = (earliest == Long.MAX_VALUE) ? NO_DEADLINE : number(earliest);
		args[4] = number(limits.size());
		int i = 5;
		for (Limit limit : limits) {
			byte[][] encoded = limitArgs(limit);
			System.arraycopy(encoded, 0, args, i, encoded.length);
			i += encoded.length;
		}
		args[i++] = number(shapeCount);
		for (int shape = 0; shape < shapeCount; shape++) {
			args[i++] = number(shapes[3 * shape] + 1);
			args[i++] = number(shapes[3 * shape + 1]);
			args[i++] = number(shapes[3 * shape + 2]);
		}
		int k = 0;
		int a = 0;
		for (Coalescer.Pending pending : requests) {
			System.arraycopy(pending.keys, 0, keys, k, pending.keys.length);
			k += pending.keys.length;
			args[i++] = pending.deadlineArg;
			args[i++] = number(pending.acquisitions.size());
			for (int j = 0; j < pending.acquisitions.size(); j++) {
				args[i++] = number(shapeOf[a++] + 1);
			}
		}
		return this.runner.send(this.scripts.forAcquisitions(all), keys, args);
	}

	/**
	 * Says whether every request is one acquisition of the same bucket limit, cost and maximum wait (the
	 * common batch: one policy's requests): then lone-bucket.lua decides them all, without driver.lua's
	 * batch header and functions.
	 */
	private static boolean isOneBucketShape(List<Coalescer.Pending> requests) {
		Acquisition first = requests.get(0).acquisitions.get(0);
		Algorithm algorithm = first.limit().algorithm();
		if (algorithm != Algorithm.TOKEN_BUCKET && algorithm != Algorithm.LEAKY_BUCKET) {
			return false;
		}
		for (Coalescer.Pending pending : requests) {
			if (pending.acquisitions.size() != 1) {
				return false;
			}
			Acquisition acquisition = pending.acquisitions.get(0);
			if ((acquisition.limit() != first.limit() && !acquisition.limit().equals(first.limit()))
					|| acquisition.cost() != first.cost()
					|| acquisition.maxWaitNanos() / 1000 != first.maxWaitNanos() / 1000) {
				return false;
			}
		}
		return true;
	}

	/**
	 * Sends requests of one bucket shape to lone-bucket.lua: one key each, the plain format's arguments with
	 * the earliest deadline, then each request's own (see the script).
	 */
	private @Nullable CompletableFuture<List<Long>> sendOneBucketShape(List<Coalescer.Pending> requests) {
		int n = requests.size();
		byte[][] keys = new byte[n][];
		long earliest = Long.MAX_VALUE;
		for (int i = 0; i < n; i++) {
			Coalescer.Pending pending = requests.get(i);
			keys[i] = pending.keys[0];
			if (pending.serverDeadline != ServerClock.NONE) {
				earliest = Math.min(earliest, pending.serverDeadline);
			}
		}
		List<Acquisition> first = requests.get(0).acquisitions;
		byte[][] plain = args(first, ACQUIRE, (earliest == Long.MAX_VALUE) ? NO_DEADLINE : number(earliest), null);
		byte[][] args = java.util.Arrays.copyOf(plain, plain.length + n);
		for (int i = 0; i < n; i++) {
			args[plain.length + i] = requests.get(i).deadlineArg;
		}
		return this.runner.send(this.scripts.forAcquire(first), keys, args);
	}

	/** The last limit a batch carried and its 5 arguments: most batches carry the same one. */
	private volatile @Nullable EncodedLimit lastLimit;

	private record EncodedLimit(Limit limit, byte[][] args) {
	}

	private byte[][] limitArgs(Limit limit) {
		EncodedLimit last = this.lastLimit;
		if (last != null && (last.limit() == limit || last.limit().equals(limit))) {
			return last.args();
		}
		byte[][] args = { bytes(limit.algorithm().id()), number(limit.limit()), number(micros(limit.period().toNanos())),
				number(limit.burst()), number(micros(limit.emissionIntervalNanos())) };
		this.lastLimit = new EncodedLimit(limit, args);
		return args;
	}

	private static int indexOf(List<Limit> limits, Limit limit) {
		for (int i = 0; i < limits.size(); i++) {
			Limit candidate = limits.get(i);
			if (candidate == limit || candidate.equals(limit)) {
				return i;
			}
		}
		return -1;
	}

	/** Thrown for a request whose failure was already counted (once per coalesced call). */
	private static final class CountedElsewhere extends Exception {

		private static final long serialVersionUID = 1L;

		CountedElsewhere() {
			super(null, null, false, false);
		}

	}

	private void learnClock(RedisNode node, long sentNanos, ReplyPart reply) {
		if (this.nowMicros == null) {
			node.clock().record(sentNanos, System.nanoTime(), reply.serverTime());
		}
	}

	/**
	 * A reply read after its caller gave up. When Redis ran the script before the acquisition's deadline, Redis
	 * answered in time and this instance read the answer late (too busy: a cold JVM, a GC pause, CPUs
	 * shared with a flood): that is no outage, so the node's breaker hears of an answer (it stays closed, or
	 * closes) rather than keeping every decision on on-failure for a probe interval. Then gives back what
	 * the reply took (see {@link #giveBackLate}).
	 */
	private void readLate(RedisNode node, long serverDeadline, LuaScript script, byte[][] keys,
			List<Acquisition> acquisitions, Lease @Nullable [] leases, ReplyPart reply) {
		if (serverDeadline != ServerClock.NONE && !reply.isPastDeadline()) {
			onAnswer(node);
		}
		giveBackLate(node, script, keys, acquisitions, leases, reply);
	}

	/**
	 * A reply that came after the caller gave up (and on-failure decided): when the script ran before its
	 * deadline and took tokens, give them back, so that Redis keeps only what answered requests spent.
	 * Runs on the client's thread: the release is queued for the compensation thread.
	 */
	private void giveBackLate(RedisNode node, LuaScript script, byte[][] keys, List<Acquisition> acquisitions,
			Lease @Nullable [] leases, ReplyPart reply) {
		if (!reply.tookTokens(acquisitions.size())) {
			// Past its deadline, rejected (all or nothing: nothing is held), or an odd reply.
			return;
		}
		this.lateReplies.increment();
		if (leases == null && !anyConcurrency(acquisitions)) {
			// Exactly what the late call took, by the receipts its reply makes: nothing of a window that has
			// ended meanwhile, never another request's entry (sent as give-backs are, without blocking).
			Admission admission = new Admission();
			admission.now = reply.serverTime();
			for (Receipt receipt : receipts(acquisitions, decisions(acquisitions, reply), admission)) {
				giveBackInRedis(receipt);
			}
			return;
		}
		try {
			this.compensator.execute(() -> {
				try {
					this.runner.run(script, keys, args(acquisitions, RELEASE, NO_DEADLINE, leases),
							System.nanoTime() + this.timeoutNanos, null);
				}
				catch (Exception ex) {
					if (ex instanceof InterruptedException) {
						Thread.currentThread().interrupt();
					}
					logger.debug("Redis rate limit store could not give back tokens a late reply from " + node.name()
							+ " took", ex);
				}
			});
		}
		catch (RejectedExecutionException ex) {
			logger.debug("Redis rate limit store: too many late replies to give back, one dropped");
		}
	}

	private RedisNode node(byte[] key) {
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
		this.nodeListeners.forEach((listener) -> listener.accept(name));
		return created;
	}

	private RedisNode newNode(String name) {
		return new RedisNode(name,
				new CircuitBreaker(this.failureThreshold, this.probeIntervalNanos, System::nanoTime));
	}

	private void onAnswer(RedisNode node) {
		long outage = node.breaker().onSuccess();
		if (outage >= 0) {
			logger.info("Redis rate limit store answers again on " + node.name() + " after "
					+ Duration.ofNanos(outage).toMillis() + " ms; deciding with Redis");
		}
	}

	private void onError(RedisNode node, Exception ex) {
		this.errors.increment();
		node.countError();
		RedisError error = RedisError.of(ex);
		if (error.isCredentials()) {
			long heldBack = this.answeredLog.tryLog(error.code());
			if (heldBack >= 0) {
				logger.error("Redis at " + node.name() + " refused the rate limiter (" + error.message() + "): "
						+ CREDENTIALS_ACTION + heldBack(heldBack));
			}
		}
		if (!error.kind().isOutage()) {
			// Redis answered: it is up, only this call failed. on-failure decides it; the breaker stays closed.
			onAnswer(node);
			long heldBack = error.isCredentials() ? -1 : this.answeredLog.tryLog(error.code());
			if (heldBack >= 0) {
				logger.warn("Redis at " + node.name() + " answered a rate limit call with an error (" + error.message()
						+ "); that call was decided by on-failure=" + onFailureName()
						+ " (Redis is up: the breaker stays closed)" + heldBack(heldBack));
			}
			return;
		}
		if (node.breaker().onFailure()) {
			logger.warn("Redis rate limit store failed on " + node.name() + " (" + error.message() + "); deciding on-failure="
					+ onFailureName() + " for its keys without waiting for Redis until it answers again");
		}
		else if (logger.isDebugEnabled()) {
			logger.debug("Redis rate limit store failed on " + node.name() + "; deciding on-failure=" + onFailureName(), ex);
		}
	}

	private String onFailureName() {
		String name = this.onFailure.name().toLowerCase(Locale.ROOT);
		return this.onFailureByLimit.isEmpty() ? name : name + " (or a policy's own)";
	}

	/** What decides an acquisition when Redis cannot: its limit's own choice, else the store's. */
	private OnFailure onFailure(Acquisition acquisition) {
		return this.onFailureByLimit.isEmpty() ? this.onFailure
				: this.onFailureByLimit.getOrDefault(acquisition.limitId(), this.onFailure);
	}

	private static String heldBack(long heldBack) {
		return "; logged at most once a minute per kind" + ((heldBack > 0) ? ", " + heldBack + " more since the last line" : "");
	}

	/**
	 * One call at start-up, in the background, that connects and runs a script reading (not changing) one
	 * key: wrong credentials, a missing permission or an unreachable Redis are logged before any request.
	 * A Redis that only answers slower than the start-up waits (a first connection on a busy machine) is
	 * given the fail-fast check's time, in the background, before it is reported as not answering.
	 */
	private CompletableFuture<@Nullable RedisError> checkAtStartUp(Duration wait) {
		CompletableFuture<@Nullable RedisError> result = new CompletableFuture<>();
		Acquisition probe = new Acquisition("start-up-check", Limit.builder().limit(1).period(Duration.ofSeconds(1)).build(),
				"", 1);
		Thread thread = new Thread(() -> {
			long start = System.nanoTime();
			long deadline = start + wait.toNanos();
			boolean late = false;
			try {
				for (int attempt = 1;; attempt++) {
					long sent = System.nanoTime();
					try {
						List<Long> reply = this.runner.run(this.scripts.forAcquisitions(List.of(probe)),
								keys(List.of(probe)), args(List.of(probe), PEEK, NO_DEADLINE, null), deadline, null);
						learnClock(node(keys(List.of(probe))[0]), sent, ReplyPart.of(reply));
						if (late) {
							logger.info("Redis at " + this.endpoint + " answered the rate limiter's start-up check after "
									+ TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start) + " ms");
						}
						result.complete(null);
						this.answeredAtStartUp.complete(true);
						return;
					}
					catch (Exception ex) {
						// A connection lost while it was being set up (the client reports no answer of Redis'
						// own) is tried twice more while the wait lasts, so that a refused password is reported
						// as such rather than as an outage.
						RedisError error = RedisError.of(ex);
						if (!late && !this.failFast && "TIMEOUT".equals(error.code())) {
							// Slow, not refused: the start-up goes on (on-failure decides meanwhile), and this
							// thread waits as long as fail-fast would before it reports an outage.
							late = true;
							result.complete(error);
							deadline = System.nanoTime() + FAIL_FAST_CHECK.toNanos();
							continue;
						}
						if (error.kind() != RedisError.Kind.UNREACHABLE || "TIMEOUT".equals(error.code())
								|| attempt >= STARTUP_ATTEMPTS || deadline - System.nanoTime() < STARTUP_RETRY.toNanos() * 2) {
							throw ex;
						}
						Thread.sleep(STARTUP_RETRY.toMillis());
					}
				}
			}
			catch (Exception ex) {
				RedisError error = RedisError.of(ex);
				if (error.isCredentials()) {
					logger.error("Redis at " + this.endpoint + " refused the rate limiter's credentials or permissions at start-up ("
							+ error.message() + "): " + CREDENTIALS_ACTION + ". Until then on-failure=" + onFailureName()
							+ " decides every request");
				}
				else {
					logger.warn("Redis at " + this.endpoint + " did not answer the rate limiter at start-up ("
							+ error.message() + (late ? ", for " + FAIL_FAST_CHECK.toSeconds() + " s" : "")
							+ "); until it does, on-failure=" + onFailureName()
							+ " decides. rate-limit.store.redis.fail-fast=true fails the start-up instead");
				}
				result.complete(error);
				this.answeredAtStartUp.complete(false);
			}
		}, "rate-limit-redis-start-up-check");
		thread.setDaemon(true);
		thread.start();
		return result;
	}

	/**
	 * Waits for the start-up check (at most a second; ten with fail-fast).
	 * @throws IllegalStateException with fail-fast, when Redis refused or did not answer
	 */
	private void awaitStartUpCheck() {
		RedisError error;
		try {
			error = this.startUpCheck.get((this.failFast ? FAIL_FAST_CHECK : START_UP_CHECK).toMillis() + 500,
					TimeUnit.MILLISECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return;
		}
		catch (ExecutionException | TimeoutException ex) {
			error = new RedisError(RedisError.Kind.UNREACHABLE, "TIMEOUT", "no answer in " + FAIL_FAST_CHECK.toSeconds() + " s");
		}
		if (error != null && this.failFast) {
			close();
			throw new IllegalStateException("Redis at " + this.endpoint
					+ (error.isCredentials() ? " refused the rate limiter's credentials (" + error.message() + "); "
							+ CREDENTIALS_ACTION
							: " did not answer the rate limiter (" + error.message() + "); start Redis or correct "
									+ "spring.data.redis.host, port or cluster.nodes"));
		}
	}

	/**
	 * Decides without Redis, each acquisition by its limit's {@code on-failure}: {@code allow} lets it
	 * through, {@code deny} refuses it, {@code local} asks the local store. All or nothing as ever: a
	 * request one of whose limits refuses takes nothing locally. An admission learns each decision's
	 * receipt: {@code LOCAL} with the local store's mark, else {@code NOWHERE}.
	 */
	private List<Decision> fallback(List<Acquisition> acquisitions, byte[] op, Lease @Nullable [] leases,
			@Nullable Admission admission) {
		this.fallbacks.increment();
		int n = acquisitions.size();
		OnFailure[] modes = new OnFailure[n];
		boolean denied = false;
		List<Acquisition> local = new ArrayList<>(0);
		for (int i = 0; i < n; i++) {
			modes[i] = onFailure(acquisitions.get(i));
			denied |= modes[i] == OnFailure.DENY;
			if (modes[i] == OnFailure.LOCAL) {
				local.add(acquisitions.get(i));
			}
		}
		if (leases != null) {
			// A slot on-failure grants is not in Redis: given back to the local store, or nowhere.
			for (int i = 0; i < n; i++) {
				if (leases[i] != null) {
					leases[i].where = (modes[i] == OnFailure.LOCAL && op == ACQUIRE && !denied) ? Lease.LOCAL : Lease.NOWHERE;
				}
			}
		}
		if (op != ACQUIRE) {
			// A check or a release: the local store's budget, or the whole one (nothing was taken in Redis' stead).
			List<Decision> decisions = new ArrayList<>(n);
			for (int i = 0; i < n; i++) {
				Acquisition acquisition = acquisitions.get(i);
				decisions.add((modes[i] != OnFailure.LOCAL) ? whole(acquisition)
						: (op == CHECK) ? this.localStore.check(acquisition) : this.localStore.release(acquisition));
			}
			return decisions;
		}
		// The local store's receipts, with its own marks: a give-back goes there.
		List<Receipt> localReceipts = (!denied && !local.isEmpty()) ? this.localStore.admitAll(local) : List.of();
		List<Receipt> receipts = new ArrayList<>(n);
		List<Decision> decisions = new ArrayList<>(n);
		int nextLocal = 0;
		for (int i = 0; i < n; i++) {
			Acquisition acquisition = acquisitions.get(i);
			Limit limit = acquisition.limit();
			Receipt receipt;
			if (modes[i] == OnFailure.DENY) {
				receipt = new Receipt(acquisition,
						Decision.rejected(limit.limit(), 0, DENY_RETRY_AFTER_NANOS, DENY_RETRY_AFTER_NANOS), Receipt.NO_MARK,
						Receipt.Place.NOWHERE);
			}
			else if (modes[i] == OnFailure.LOCAL && !denied) {
				Receipt theirs = localReceipts.get(nextLocal++);
				receipt = new Receipt(acquisition, theirs.decision(), theirs.mark(),
						(theirs.place() == Receipt.Place.STORE) ? Receipt.Place.LOCAL : Receipt.Place.NOWHERE);
			}
			else {
				// Allowed without a store; or, in a request another limit refuses, left as it was.
				Decision decision = denied ? whole(acquisition)
						: Decision.allowed(limit.limit(), limit.burst() - acquisition.cost(), 0);
				receipt = new Receipt(acquisition, decision, Receipt.NO_MARK, Receipt.Place.NOWHERE);
			}
			receipts.add(receipt);
			decisions.add(receipt.decision());
		}
		if (!local.isEmpty()) {
			decidedLocally(receipts);
		}
		if (admission != null) {
			admission.place = Receipt.Place.NOWHERE;
			admission.fallback = receipts;
		}
		return decisions;
	}

	/** A budget as on-failure shows it without a store: whole. */
	private static Decision whole(Acquisition acquisition) {
		return Decision.allowed(acquisition.limit().limit(), acquisition.limit().burst(), 0);
	}

	private byte[][] keys(List<Acquisition> acquisitions) {
		byte[][] keys = new byte[acquisitions.size()][];
		for (int i = 0; i < keys.length; i++) {
			Acquisition acquisition = acquisitions.get(i);
			keys[i] = this.keys.key(acquisition.limitId(), acquisition.key());
		}
		return keys;
	}

	/** A deadline in the server's time as the scripts' argument: {@code ''} for none. */
	private static byte[] deadlineArg(long serverDeadline) {
		return (serverDeadline == ServerClock.NONE) ? NO_DEADLINE : number(serverDeadline);
	}

	private byte[][] args(List<Acquisition> acquisitions, byte[] op, byte[] deadlineArg, Lease @Nullable [] leases) {
		byte[][] args = new byte[3 + 7 * acquisitions.size()][];
		args[0] = (this.nowMicros != null) ? number(this.nowMicros.getAsLong()) : SERVER_TIME;
		args[1] = (op == PEEK) ? RELEASE : op;
		args[2] = deadlineArg;
		int i = 3;
		for (int a = 0; a < acquisitions.size(); a++) {
			i = acquisitionArgs(args, i, acquisitions.get(a), op, (leases != null) ? leases[a] : null);
		}
		return args;
	}

	private int acquisitionArgs(byte[][] args, int at, Acquisition acquisition, byte[] op, @Nullable Lease lease) {
		Limit limit = acquisition.limit();
		int i = at;
		args[i++] = bytes(limit.algorithm().id());
		args[i++] = number((op == PEEK) ? 0 : acquisition.cost());
		args[i++] = number(acquisition.maxWaitNanos() / 1000);
		args[i++] = number(limit.limit());
		if (limit.algorithm() == Algorithm.CONCURRENCY) {
			// A lease: its expiry as the period, its id as the interval (see concurrency.lua).
			args[i++] = number(micros(this.leaseExpiryNanos));
			args[i++] = number(limit.burst());
			args[i++] = (lease != null) ? bytes(lease.id) : NO_DEADLINE;
			return i;
		}
		args[i++] = number(micros(limit.period().toNanos()));
		args[i++] = number(limit.burst());
		args[i++] = number(micros(limit.emissionIntervalNanos()));
		return i;
	}

	private static boolean isConcurrency(Acquisition acquisition) {
		return acquisition.limit().algorithm() == Algorithm.CONCURRENCY;
	}

	private static boolean anyConcurrency(List<Acquisition> acquisitions) {
		for (Acquisition acquisition : acquisitions) {
			if (isConcurrency(acquisition)) {
				return true;
			}
		}
		return false;
	}

	/** A request's slot of a concurrency limit: where it was taken, and its lease in Redis. */
	private static final class Lease {

		static final int REDIS = 0;

		static final int LOCAL = 1;

		static final int NOWHERE = 2;

		final String id;

		final byte[] key;

		final long cost;

		/** Where the slot was taken: Redis (refreshed, released there), the local store, or nowhere. */
		volatile int where = REDIS;

		Lease(String id, byte[] key, long cost) {
			this.id = id;
			this.key = key;
			this.cost = cost;
		}

	}

	/** An acquisition by identity: equal acquisitions of two requests are two slots. */
	private static final class Identity {

		private final Acquisition acquisition;

		Identity(Acquisition acquisition) {
			this.acquisition = acquisition;
		}

		@Override
		public boolean equals(Object other) {
			return other instanceof Identity that && that.acquisition == this.acquisition;
		}

		@Override
		public int hashCode() {
			return System.identityHashCode(this.acquisition);
		}

	}

	private static List<Decision> decisions(List<Acquisition> acquisitions, ReplyPart reply) {
		if (reply.size() == 1 && acquisitions.size() == 1 && reply.get(0) >= 0) {
			return List.of(compactDecision(acquisitions.get(0), reply.get(0)));
		}
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

	/**
	 * Derives a bucket's decision from its compact reply, with the script's arithmetic (integer
	 * microseconds, then nanoseconds): {@code 2 * used} when allowed ({@code used = tat' - now}),
	 * {@code 2 * (base - now) + 1} when rejected ({@code base = max(tat, now)}); see {@code token-bucket.lua}
	 * and {@code leaky-bucket.lua}, whose {@code acquire} returns the same decision in 8 integers.
	 * @param acquisition the request's one acquisition
	 * @param compact the integer the script returned
	 * @return the decision
	 * @throws IllegalStateException when the algorithm has no compact reply
	 */
	static Decision compactDecision(Acquisition acquisition, long compact) {
		Limit limit = acquisition.limit();
		Algorithm algorithm = limit.algorithm();
		if (algorithm != Algorithm.TOKEN_BUCKET && algorithm != Algorithm.LEAKY_BUCKET) {
			throw new IllegalStateException("Unexpected compact reply " + compact + " for " + algorithm);
		}
		long interval = micros(limit.emissionIntervalNanos());
		long tolerance = interval * limit.burst();
		long cost = acquisition.cost();
		long maxWait = acquisition.maxWaitNanos() / 1000;
		long half = compact >> 1;
		if ((compact & 1) == 0) {
			long used = half;
			long reset = used * 1000;
			long next = untilNext(used, tolerance, interval) * 1000;
			if (algorithm == Algorithm.TOKEN_BUCKET) {
				long wait = used - tolerance;
				return (wait <= 0) ? Decision.allowed(limit.limit(), (tolerance - used) / interval, reset, next)
						// Reserved ahead (delay mode): the request proceeds once its tokens have refilled.
						: Decision.delayed(limit.limit(), 0, reset, next, wait * 1000);
			}
			long remaining = (tolerance - used) / interval;
			long turn = (maxWait > 0) ? used - cost * interval : 0;
			return (turn > 0) ? Decision.delayed(limit.limit(), remaining, reset, next, turn * 1000)
					: Decision.allowed(limit.limit(), remaining, reset, next);
		}
		long spent = half;
		long used = spent + cost * interval;
		long available = Math.max(0, (tolerance - spent) / interval);
		long retry = used - tolerance;
		if (algorithm == Algorithm.LEAKY_BUCKET) {
			retry = Math.max(retry, (maxWait > 0) ? spent - maxWait : 0);
		}
		long next = Math.min(untilNext(spent, tolerance, interval),
				(algorithm == Algorithm.LEAKY_BUCKET) ? Math.max(1, retry) : retry);
		return Decision.rejected(limit.limit(), available, spent * 1000, next * 1000, retry * 1000);
	}

	/** As {@code gcra_next} of prelude.lua (GcraState#untilNext) in microseconds. */
	private static long untilNext(long used, long tolerance, long interval) {
		if (used <= 0) {
			return 0;
		}
		long credit = tolerance - used;
		long available = Math.max(0, Math.floorDiv(credit, interval));
		return (available + 1) * interval - credit;
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
		return (value >= 0 && value < SMALL_NUMBERS.length) ? SMALL_NUMBERS[(int) value] : bytes(Long.toString(value));
	}

	/** The arguments of small numbers (counts, indexes, costs), shared: Lettuce only reads them. */
	private static final byte[][] SMALL_NUMBERS = new byte[1024][];

	static {
		for (int i = 0; i < SMALL_NUMBERS.length; i++) {
			SMALL_NUMBERS[i] = bytes(Integer.toString(i));
		}
	}

	private static byte[] bytes(String value) {
		return value.getBytes(StandardCharsets.US_ASCII);
	}

	/**
	 * Says where the factory connects, for log lines: {@code host:port}, the cluster's seed nodes, or the
	 * Sentinel master.
	 */
	private static String endpoint(RedisConnectionFactory factory) {
		try {
			if (isLettuce(factory)) {
				LettuceConnectionFactory lettuce = (LettuceConnectionFactory) factory;
				if (lettuce.isClusterAware()) {
					return "cluster " + lettuce.getClusterConfiguration().getClusterNodes();
				}
				if (lettuce.isRedisSentinelAware()) {
					return "sentinel master " + lettuce.getSentinelConfiguration().getMaster().getName();
				}
				return lettuce.getHostName() + ":" + lettuce.getPort();
			}
			if (ClassUtils.isPresent("redis.clients.jedis.Jedis", RedisRateLimitStore.class.getClassLoader())
					&& factory instanceof JedisConnectionFactory jedis) {
				if (jedis.isRedisClusterAware()) {
					return "cluster " + jedis.getClusterConfiguration().getClusterNodes();
				}
				if (jedis.isRedisSentinelAware()) {
					return "sentinel master " + jedis.getSentinelConfiguration().getMaster().getName();
				}
				return jedis.getHostName() + ":" + jedis.getPort();
			}
		}
		catch (RuntimeException ex) {
			// fall through: a name for log lines only
		}
		return "redis";
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

		private @Nullable Duration timeout = Duration.ofMillis(100);

		private OnFailure onFailure = OnFailure.ALLOW;

		private final Map<String, OnFailure> onFailureByLimit = new HashMap<>();

		private @Nullable RateLimitStore localStore;

		private int failureThreshold = 3;

		private @Nullable Duration probeInterval = Duration.ofSeconds(1);

		private @Nullable Boolean clustered;

		private int threads = 64;

		private boolean failFast;

		private @Nullable Duration rejectionCacheMaxAge = Duration.ofSeconds(1);

		private boolean coalescing = true;

		private Duration overridesPollInterval = Duration.ofSeconds(1);

		private @Nullable LongSupplier nowMicros;

		private Duration leaseExpiry = Duration.ofSeconds(5);

		private boolean refreshLeases = true;

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
			this.timeout = timeout;
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
		 * Sets what decides one limit's acquisitions when Redis fails, instead of the store's choice
		 * ({@link #onFailure(OnFailure)}): a login lockout may decide {@link OnFailure#LOCAL} while API quotas
		 * fail open. A request with several limits takes each one's choice, all or nothing.
		 * @param limitId the limit's id (a configured policy's name)
		 * @param onFailure its choice
		 * @return this builder
		 */
		public Builder onFailure(String limitId, OnFailure onFailure) {
			this.onFailureByLimit.put(Objects.requireNonNull(limitId, "limitId"),
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
			this.probeInterval = probeInterval;
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
		 * Sets the longest a rejection Redis answered is kept in process (1 s when not called; zero keeps
		 * none). While kept, requests for that key of the same limit and at least that cost are rejected
		 * without calling Redis, until the Retry-After Redis gave; a release or reset through this store
		 * drops it at once; a reset on another instance is seen within the overrides poll interval, a
		 * release there within this age.
		 * @param maxAge zero or positive
		 * @return this builder
		 */
		public Builder rejectionCache(Duration maxAge) {
			this.rejectionCacheMaxAge = maxAge;
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
			this.coalescing = coalescing;
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
			this.overridesPollInterval = Objects.requireNonNull(pollInterval, "pollInterval");
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
			this.failFast = failFast;
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
			this.leaseExpiry = Objects.requireNonNull(leaseExpiry, "leaseExpiry");
			return this;
		}

		/**
		 * Stops the refresher (tests only: they call {@link RedisRateLimitStore#refreshLeases()} themselves).
		 * @return this builder
		 */
		Builder withoutLeaseRefresher() {
			this.refreshLeases = false;
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
		 * After at most a second (ten with {@link #failFast(boolean)}), whether or not Redis answered a first
		 * call that connects and reads one key; wrong credentials are then logged as an ERROR.
		 * @return the store
		 * @throws InvalidValueException naming the wrong value ({@code timeout}, {@code failureThreshold},
		 * {@code probeInterval}, {@code rejectionCache} or {@code threads}), and what to do
		 * @throws IllegalStateException with fail-fast, when Redis refused the credentials or did not answer
		 */
		public RedisRateLimitStore build() {
			if (this.timeout == null || this.timeout.isNegative() || this.timeout.isZero()) {
				throw new InvalidValueException("timeout", "timeout must be positive, was " + this.timeout,
						"Set how long a decision may wait for Redis, e.g. 100ms");
			}
			if (this.failureThreshold < 1) {
				throw new InvalidValueException("failureThreshold",
						"failure threshold must be at least 1, was " + this.failureThreshold,
						"Set how many failed Redis calls in a row open the breaker, e.g. 3");
			}
			if (this.probeInterval == null || this.probeInterval.isNegative() || this.probeInterval.isZero()) {
				throw new InvalidValueException("probeInterval", "probe interval must be positive, was " + this.probeInterval,
						"Set how often an open breaker lets one request try Redis, e.g. 1s");
			}
			if (this.rejectionCacheMaxAge == null || this.rejectionCacheMaxAge.isNegative()) {
				throw new InvalidValueException("rejectionCache",
						"rejection cache must be zero or positive, was " + this.rejectionCacheMaxAge,
						"Set how long a rejection Redis answered is kept in process, e.g. 1s (0 keeps none)");
			}
			if (this.overridesPollInterval.compareTo(MIN_POLL_INTERVAL) < 0) {
				// Each poll is a Redis call of every instance: below this, polls cost Redis and the CPUs more than they save.
				throw new InvalidValueException("overridesPollInterval",
						"overrides poll interval must be at least 100 ms, was " + this.overridesPollInterval,
						"Set how often each instance looks for runtime changes made elsewhere, e.g. 1s");
			}
			if (this.leaseExpiry.compareTo(MIN_LEASE_EXPIRY) < 0) {
				// Leases are refreshed every third of it, each refresh a Redis call: shorter, they expire while held.
				throw new InvalidValueException("leaseExpiry", "lease expiry must be at least 100 ms, was " + this.leaseExpiry,
						"Set how long a slot of a concurrency limit outlives its last refresh, e.g. 5s");
			}
			if (this.threads < 1) {
				throw new InvalidValueException("threads", "threads must be positive, was " + this.threads,
						"Set how many threads may call Redis at once, e.g. 64");
			}
			ScriptRunner runner = isLettuce(this.connectionFactory)
					? new LettuceScriptRunner((LettuceConnectionFactory) this.connectionFactory)
					: new ConnectionScriptRunner(this.connectionFactory, this.threads);
			RedisRateLimitStore store = new RedisRateLimitStore(this, runner);
			store.awaitStartUpCheck();
			return store;
		}
	}
}
