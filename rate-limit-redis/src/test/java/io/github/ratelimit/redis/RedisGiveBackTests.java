package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.data.redis.connection.ClusterSlotHashUtil;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.CaffeineRateLimitStore;
import io.github.ratelimit.core.Decision;
import io.github.ratelimit.core.Limit;
import io.github.ratelimit.core.OnFailure;
import io.github.ratelimit.core.Receipt;
import io.github.ratelimit.test.ManualClock;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Admissions with receipts and give-backs on real Redis servers (standalone and a 3-master cluster):
 * attempts in flight never see more than the budget, whatever the instances; a give-back returns
 * exactly what it held, also while racing new admissions; it drops this instance's cached rejection;
 * on-failure's receipts give back where the cost was taken; and a success under
 * {@code count: failures} costs two script calls, a failure one.
 */
class RedisGiveBackTests {

	@RegisterExtension
	static final RedisExtension redis = new RedisExtension();

	/** Generous: a decision that timed out would be decided by on-failure, and the counts would not be Redis'. */
	private static final Duration TIMEOUT = Duration.ofSeconds(5);

	private final ManualClock clock = new ManualClock();

	private final List<RedisRateLimitStore> stores = new ArrayList<>();

	private final List<LettuceConnectionFactory> factories = new ArrayList<>();

	private ExecutorService threads;

	@BeforeEach
	void start() {
		if (!redis.process().isRunning()) {
			redis.process().start();
		}
		redis.commands().flushall();
		this.threads = Executors.newFixedThreadPool(64);
	}

	@AfterEach
	void close() throws InterruptedException {
		this.threads.shutdownNow();
		this.threads.awaitTermination(10, TimeUnit.SECONDS);
		this.stores.forEach(RedisRateLimitStore::close);
		this.factories.forEach(LettuceConnectionFactory::destroy);
	}

	/** A store of its own connections, on the test's clock. */
	private RedisRateLimitStore store(LettuceConnectionFactory factory, boolean clustered) {
		RedisRateLimitStore store = RedisRateLimitStore.builder(factory)
			.timeout(TIMEOUT)
			.onFailure(OnFailure.DENY)
			.clustered(clustered)
			.clock(() -> this.clock.nanos() / 1000)
			.build();
		this.stores.add(store);
		return store;
	}

	private LettuceConnectionFactory standalone() {
		LettuceConnectionFactory factory = redis.newFastReconnectingFactory();
		this.factories.add(factory);
		return factory;
	}

	private static Limit limit(Algorithm algorithm, long limit) {
		return Limit.builder().algorithm(algorithm).limit(limit).period(Duration.ofHours(1)).build();
	}

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
	void parallelAttemptsOfTwoInstancesAdmitTheBudgetThenExactlyWhatWasGivenBack(Algorithm algorithm) throws Exception {
		RedisRateLimitStore first = store(standalone(), false);
		RedisRateLimitStore second = store(standalone(), false);
		Limit limit = limit(algorithm, 4);
		List<List<Receipt>> admitted = admitInParallel(48, (i) -> List.of(new Acquisition("login", limit, "alice", 1)),
				first, second);
		assertThat(admitted).hasSize(4)
			.allSatisfy((receipts) -> assertThat(receipts.get(0).place()).isEqualTo(Receipt.Place.STORE));
		assertThat(first.giveBacks.inRedis(admitted.get(0).get(0)).get(5, TimeUnit.SECONDS)).isPositive();
		assertThat(second.giveBacks.inRedis(admitted.get(1).get(0)).get(5, TimeUnit.SECONDS)).isPositive();
		assertThat(admitInParallel(48, (i) -> List.of(new Acquisition("login", limit, "alice", 1)), first, second))
			.hasSize(2);
		assertThat(first.errors() + second.errors()).isZero();
	}

	/**
	 * On a 3-master cluster, requests of two limits whose keys are in different slots (one call per slot,
	 * compensation when one rejects): the budget holds, and give-backs go to each key's master.
	 */
	@Test
	void parallelAttemptsOnAClusterAdmitTheBudgetThenExactlyWhatWasGivenBack() throws Exception {
		TestRedisCluster cluster = TestRedisCluster.shared();
		RedisRateLimitStore first = store(clusterFactory(cluster), true);
		RedisRateLimitStore second = store(clusterFactory(cluster), true);
		Limit login = limit(Algorithm.TOKEN_BUCKET, 4);
		Limit perIp = limit(Algorithm.FIXED_WINDOW, 1_000);
		String ip = otherSlotThan(first.redisKey("login", "alice"), first, "ip");
		List<List<Receipt>> admitted = admitInParallel(48, (i) -> List.of(new Acquisition("login", login, "alice", 1),
				new Acquisition("ip", perIp, ip, 1)), first, second);
		assertThat(admitted).hasSize(4);
		// Everything the rejected requests took in the other slot was given back (compensation).
		assertThat(first.peek(new Acquisition("ip", perIp, ip, 1)).remaining()).isEqualTo(1_000 - 4);
		for (List<Receipt> receipts : admitted.subList(0, 2)) {
			for (Receipt receipt : receipts) {
				assertThat(second.giveBacks.inRedis(receipt).get(5, TimeUnit.SECONDS)).isPositive();
			}
		}
		assertThat(first.peek(new Acquisition("ip", perIp, ip, 1)).remaining()).isEqualTo(1_000 - 2);
		assertThat(admitInParallel(48, (i) -> List.of(new Acquisition("login", login, "alice", 1),
				new Acquisition("ip", perIp, ip, 1)), first, second)).hasSize(2);
		assertThat(first.peek(new Acquisition("ip", perIp, ip, 1)).remaining()).isEqualTo(1_000 - 4);
		assertThat(first.errors() + second.errors()).isZero();
	}

	/**
	 * 64 threads of two instances, on a clock that stands still within a round: some give back receipts
	 * held since earlier rounds while the others try to be admitted. After every round the budget reads
	 * exactly the limit less what is held, every attempt that found room was admitted, and none beyond
	 * what was given back. Then across a runtime change (the limit doubled: each held attempt comes back
	 * once, under the new limit) and past the window's end (held attempts hold nothing, credit nothing).
	 */
	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
	void giveBacksRacingAdmissionsKeepTheCountExact(Algorithm algorithm) throws Exception {
		RedisRateLimitStore first = store(standalone(), false);
		RedisRateLimitStore second = store(standalone(), false);
		RedisRateLimitStore[] both = { first, second };
		Limit limit = limit(algorithm, 16);
		Acquisition peek = new Acquisition("race", limit, "k", 1);
		List<Receipt> held = new ArrayList<>();
		java.util.Random random = new java.util.Random(algorithm.ordinal());
		for (int round = 0; round < 12; round++) {
			this.clock.advance(Duration.ofMillis(1));
			int giveBacks = Math.min(held.size(), 1 + random.nextInt(8));
			List<Receipt> given = new ArrayList<>(held.subList(0, giveBacks));
			// By position: receipts are records, two of them may be equal.
			held.subList(0, giveBacks).clear();
			Race race = race(both, given, limit);
			int room = 16 - held.size() - giveBacks;
			assertThat(race.givenBack()).as("round %d: every give-back held its cost", round).isEqualTo(giveBacks);
			assertThat(race.admitted().size()).as("round %d: admitted", round).isBetween(room, room + giveBacks);
			held.addAll(race.admitted());
			assertThat(first.peek(peek).remaining()).as("round %d: the budget", round).isEqualTo(16 - held.size());
		}
		// A runtime change doubles the limit: what is held stays spent, and comes back once, under the new limit.
		Limit doubled = limit(algorithm, 32);
		Acquisition peekDoubled = new Acquisition("race", doubled, "k", 1);
		assertThat(first.peek(peekDoubled).remaining()).as("moved: what was spent stays spent").isEqualTo(32 - held.size());
		this.clock.advance(Duration.ofMillis(1));
		Race changed = race(both, new ArrayList<>(held), doubled);
		assertThat(changed.givenBack()).as("after the change: every give-back held its cost").isEqualTo(held.size());
		assertThat(changed.admitted().size()).isBetween(32 - held.size(), 32);
		held.clear();
		held.addAll(changed.admitted());
		assertThat(first.peek(peekDoubled).remaining()).as("after the change: the budget").isEqualTo(32 - held.size());
		// Past the window (and the bucket refilled): what is held holds nothing, and credits nothing new.
		this.clock.advance(Duration.ofHours(2));
		Race later = race(both, new ArrayList<>(held), doubled);
		assertThat(later.givenBack()).as("a window that ended holds nothing").isZero();
		assertThat(later.admitted()).as("exactly the new window's budget").hasSize(32);
		assertThat(first.peek(peekDoubled).remaining()).isZero();
		assertThat(first.errors() + second.errors()).isZero();
	}

	/** What one round of 64 threads did: attempts admitted, give-backs that returned something. */
	private record Race(List<Receipt> admitted, int givenBack) {
	}

	/** 64 threads of two instances at once: the first give back one receipt each, the others try to be admitted. */
	private Race race(RedisRateLimitStore[] both, List<Receipt> given, Limit limit) throws Exception {
		CountDownLatch go = new CountDownLatch(1);
		ConcurrentLinkedQueue<Receipt> admitted = new ConcurrentLinkedQueue<>();
		AtomicInteger givenBack = new AtomicInteger();
		List<Future<?>> done = new ArrayList<>();
		for (int t = 0; t < 64; t++) {
			int thread = t;
			RedisRateLimitStore store = both[t % 2];
			done.add(this.threads.submit((Callable<Void>) () -> {
				go.await();
				if (thread < given.size()) {
					if (store.giveBacks.inRedis(given.get(thread)).get(5, TimeUnit.SECONDS) > 0) {
						givenBack.incrementAndGet();
					}
				}
				else {
					Receipt receipt = store.admitAll(List.of(new Acquisition("race", limit, "k", 1))).get(0);
					if (receipt.holdsCost()) {
						admitted.add(receipt);
					}
				}
				return null;
			}));
		}
		go.countDown();
		for (Future<?> future : done) {
			future.get(30, TimeUnit.SECONDS);
		}
		return new Race(new ArrayList<>(admitted), givenBack.get());
	}

	/** This instance's cached rejection goes at once; another instance's lasts until its age. */
	@Test
	void aGiveBackDropsThisInstancesCachedRejection() throws Exception {
		RedisRateLimitStore first = realClockStore();
		RedisRateLimitStore second = realClockStore();
		Acquisition acquisition = new Acquisition("login", limit(Algorithm.FIXED_WINDOW, 1), "alice", 1);
		Receipt receipt = first.admitAll(List.of(acquisition)).get(0);
		assertThat(receipt.holdsCost()).isTrue();
		assertThat(first.tryAcquire(acquisition).isAllowed()).isFalse();
		assertThat(second.tryAcquire(acquisition).isAllowed()).isFalse();
		assertThat(first.tryAcquire(acquisition).isAllowed()).isFalse();
		assertThat(first.decider.cachedRejections.sum()).isEqualTo(1);
		assertThat(first.giveBack(receipt)).isNull();
		// Dropped before the give-back is even answered: the next attempt asks Redis.
		Decision afterGiveBack = first.tryAcquire(acquisition);
		assertThat(first.decider.cachedRejections.sum()).isEqualTo(1);
		assertThat(afterGiveBack.isAllowed()).as("Redis ran the give-back first (one connection, in order)").isTrue();
		assertThat(second.tryAcquire(acquisition).isAllowed()).as("the other instance's cached rejection").isFalse();
		assertThat(second.decider.cachedRejections.sum()).isEqualTo(1);
	}

	private RedisRateLimitStore realClockStore() {
		RedisRateLimitStore store = RedisRateLimitStore.builder(standalone())
			.timeout(TIMEOUT)
			.onFailure(OnFailure.DENY)
			.clustered(false)
			.rejectionCache(Duration.ofSeconds(30))
			.build();
		this.stores.add(store);
		return store;
	}

	/** Under count: failures a failed attempt costs one script call (its admission), a success two. */
	@Test
	void aFailureCostsOneScriptCallASuccessTwo() throws Exception {
		RedisRateLimitStore store = store(standalone(), false);
		Acquisition acquisition = new Acquisition("login", limit(Algorithm.TOKEN_BUCKET, 3), "alice", 1);
		store.admitAll(List.of(acquisition));
		redis.commands().configResetstat();
		store.admitAll(List.of(acquisition));
		assertThat(scriptCalls()).as("a failed attempt (admitted, and not given back)").isEqualTo(1);
		redis.commands().configResetstat();
		Receipt success = store.admitAll(List.of(acquisition)).get(0);
		store.giveBacks.inRedis(success).get(5, TimeUnit.SECONDS);
		assertThat(scriptCalls()).as("a success").isEqualTo(2);
	}

	private static long scriptCalls() {
		return CoalescingTests.scriptCalls(redis.port());
	}

	/** Give-backs that arrive together go in shared script calls, each exact. */
	@Test
	void giveBacksArrivingTogetherShareScriptCalls() throws Exception {
		RedisRateLimitStore store = store(standalone(), false);
		Acquisition acquisition = new Acquisition("login", limit(Algorithm.SLIDING_WINDOW_COUNTER, 64), "alice", 1);
		List<List<Receipt>> admitted = admitInParallel(64, (i) -> List.of(acquisition), store);
		assertThat(admitted).hasSize(64);
		long before = scriptCalls();
		CountDownLatch go = new CountDownLatch(1);
		List<Future<Long>> given = new ArrayList<>();
		for (List<Receipt> receipts : admitted) {
			given.add(this.threads.submit(() -> {
				go.await();
				return store.giveBacks.inRedis(receipts.get(0)).get(5, TimeUnit.SECONDS);
			}));
		}
		go.countDown();
		for (Future<Long> future : given) {
			assertThat(future.get(30, TimeUnit.SECONDS)).isEqualTo(1);
		}
		long calls = scriptCalls() - before;
		System.out.println("Give-backs, standalone: 64 give-backs in " + calls + " script calls");
		assertThat(calls).isLessThan(64);
		assertThat(store.peek(acquisition).remaining()).isEqualTo(64);
	}

	/** on-failure: local takes the cost in the local store, and the give-back returns it there, with its mark. */
	@Test
	void aLocalFallbacksReceiptGivesBackInTheLocalStore() {
		CaffeineRateLimitStore local = new CaffeineRateLimitStore(1000, this.clock);
		RedisRateLimitStore store = fallbackStore(OnFailure.LOCAL, local);
		Acquisition acquisition = new Acquisition("login", limit(Algorithm.FIXED_WINDOW, 3), "alice", 1);
		redis.process().kill();
		Receipt receipt = store.admitAll(List.of(acquisition)).get(0);
		assertThat(receipt.place()).isEqualTo(Receipt.Place.LOCAL);
		assertThat(receipt.decision().isAllowed()).isTrue();
		assertThat(local.peek(acquisition).remaining()).isEqualTo(2);
		store.giveBack(receipt);
		assertThat(local.peek(acquisition).remaining()).isEqualTo(3);
		assertThat(store.giveBacks.lost.sum()).isZero();
	}

	/** on-failure: allow took nothing anywhere: its receipt gives nothing back; deny's rejection holds nothing. */
	@Test
	void anAllowedOrDeniedFallbacksReceiptHoldsNothing() {
		CaffeineRateLimitStore local = new CaffeineRateLimitStore(1000, this.clock);
		RedisRateLimitStore allow = fallbackStore(OnFailure.ALLOW, local);
		RedisRateLimitStore deny = fallbackStore(OnFailure.DENY, local);
		Acquisition acquisition = new Acquisition("login", limit(Algorithm.FIXED_WINDOW, 3), "alice", 1);
		assertThat(local.tryAcquire(acquisition).isAllowed()).isTrue();
		redis.process().kill();
		Receipt allowed = allow.admitAll(List.of(acquisition)).get(0);
		assertThat(allowed.decision().isAllowed()).isTrue();
		assertThat(allowed.place()).isEqualTo(Receipt.Place.NOWHERE);
		assertThat(allowed.holdsCost()).isFalse();
		assertThat(allow.giveBack(allowed)).isNull();
		Receipt denied = deny.admitAll(List.of(acquisition)).get(0);
		assertThat(denied.decision().isAllowed()).isFalse();
		assertThat(denied.holdsCost()).isFalse();
		assertThat(deny.giveBack(denied)).isNull();
		// The local store was neither charged nor given back to.
		assertThat(local.peek(acquisition).remaining()).isEqualTo(2);
		assertThat(allow.giveBacks.lost.sum() + deny.giveBacks.lost.sum()).isZero();
	}

	/** A give-back that cannot reach Redis leaves the attempt charged: counted, never generous. */
	@Test
	void aGiveBackThatFailsLeavesTheAttemptCharged() throws Exception {
		RedisRateLimitStore store = RedisRateLimitStore.builder(standalone())
			.timeout(Duration.ofMillis(200))
			.onFailure(OnFailure.DENY)
			.clustered(false)
			.breaker(100, Duration.ofSeconds(1))
			.clock(() -> this.clock.nanos() / 1000)
			.build();
		this.stores.add(store);
		Acquisition acquisition = new Acquisition("login", limit(Algorithm.FIXED_WINDOW, 3), "alice", 1);
		Receipt receipt = store.admitAll(List.of(acquisition)).get(0);
		redis.process().kill();
		long errors = store.errors();
		assertThat(store.giveBacks.inRedis(receipt).get(5, TimeUnit.SECONDS)).isEqualTo(-1);
		assertThat(store.giveBacks.lost.sum()).isEqualTo(1);
		assertThat(store.errors()).isEqualTo(errors + 1);
	}

	private RedisRateLimitStore fallbackStore(OnFailure onFailure, CaffeineRateLimitStore local) {
		RedisRateLimitStore store = RedisRateLimitStore.builder(standalone())
			.timeout(Duration.ofMillis(200))
			.onFailure(onFailure)
			.localStore(local)
			.clustered(false)
			.clock(() -> this.clock.nanos() / 1000)
			.build();
		this.stores.add(store);
		return store;
	}

	private interface Request {

		List<Acquisition> of(int i);

	}

	/**
	 * Runs the requests at once on the test's threads, alternating the stores, and every other pair of requests
	 * asynchronously ({@code admitAllAsync}: both paths share the budget); returns the receipts of those admitted.
	 */
	private List<List<Receipt>> admitInParallel(int requests, Request request, RedisRateLimitStore... stores)
			throws Exception {
		CountDownLatch go = new CountDownLatch(1);
		List<Future<List<Receipt>>> results = new ArrayList<>();
		for (int i = 0; i < requests; i++) {
			int index = i;
			results.add(this.threads.submit(() -> {
				go.await();
				RedisRateLimitStore store = stores[index % stores.length];
				return ((index / 2) % 2 == 0) ? store.admitAll(request.of(index))
						: store.admitAllAsync(request.of(index)).toCompletableFuture().get(30, TimeUnit.SECONDS);
			}));
		}
		go.countDown();
		List<List<Receipt>> admitted = new ArrayList<>();
		for (Future<List<Receipt>> result : results) {
			List<Receipt> receipts = result.get(30, TimeUnit.SECONDS);
			boolean allowed = receipts.stream().allMatch((receipt) -> receipt.decision().isAllowed());
			assertThat(receipts).allSatisfy((receipt) -> assertThat(receipt.holdsCost()).isEqualTo(allowed));
			if (allowed) {
				admitted.add(receipts);
			}
		}
		return admitted;
	}

	private LettuceConnectionFactory clusterFactory(TestRedisCluster cluster) {
		LettuceConnectionFactory factory = cluster.connectionFactory();
		this.factories.add(factory);
		return factory;
	}

	/** A key of the limit whose Redis key is in another slot than the given one. */
	private static String otherSlotThan(String redisKey, RedisRateLimitStore store, String limitId) {
		int slot = ClusterSlotHashUtil.calculateSlot(redisKey);
		for (int i = 0;; i++) {
			String key = "10.0.0." + i;
			if (ClusterSlotHashUtil.calculateSlot(store.redisKey(limitId, key)) != slot) {
				return key;
			}
		}
	}
}
