package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.CaffeineRateLimitStore;
import io.github.ratelimit.core.Decision;
import io.github.ratelimit.core.Limit;
import io.github.ratelimit.core.OnFailure;
import io.github.ratelimit.test.ManualClock;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Concurrency limits on a real Redis: leases in a sorted set, one budget across instances, exact under
 * many threads; a crashed instance's slots come back after the lease expiry (in Redis' time, or the
 * test's clock), refreshed leases never expire; the scripts agree with the in-process counter.
 */
class ConcurrencyLeaseTests {

	@RegisterExtension
	static final RedisExtension redis = new RedisExtension();

	private static final Limit FIVE = Limit.builder().algorithm(Algorithm.CONCURRENCY).limit(5).build();

	private static final Limit TWO = Limit.builder().algorithm(Algorithm.CONCURRENCY).limit(2).build();

	private static TestRedisCluster cluster;

	private static LettuceConnectionFactory clusterFactory;

	private final List<RedisRateLimitStore> stores = new ArrayList<>();

	private final AtomicLong nowMicros = new AtomicLong(1_700_000_000_000_000L);

	@BeforeEach
	void flush() {
		redis.commands().flushall();
	}

	@org.junit.jupiter.api.AfterEach
	void closeStores() {
		this.stores.forEach(RedisRateLimitStore::close);
	}

	@AfterAll
	static void stopCluster() {
		if (clusterFactory != null) {
			clusterFactory.destroy();
		}
	}

	@Test
	void thirtyTwoThreadsOnTwoInstancesAdmitExactlyTheLimitWhileTheyHoldTheirSlots() throws Exception {
		RedisConnectionFactory factory = redis.connectionFactory();
		exactUnderContention(store(factory), store(factory), "shared");
		assertThat(redis.commands().zcard("rate-limit:{slots:shared}")).isZero();
	}

	@Test
	void thirtyTwoThreadsOnTwoInstancesAdmitExactlyTheLimitOnACluster() throws Exception {
		RedisConnectionFactory factory = clusterFactory();
		exactUnderContention(store(factory), store(factory), "on-a-cluster");
		// A concurrency limit and a rate in different slots: rejected by the rate, the slot is given back.
		RedisRateLimitStore store = this.stores.get(0);
		Limit rate = Limit.builder().limit(1).period(Duration.ofHours(1)).build();
		Acquisition slot = new Acquisition("slots", TWO, "mixed", 1);
		assertThat(store.tryAcquireAll(List.of(slot, new Acquisition("rate", rate, "other", 1))))
			.allMatch(Decision::isAllowed);
		store.release(slot);
		List<Decision> second = store.tryAcquireAll(List.of(new Acquisition("slots", TWO, "mixed", 1),
				new Acquisition("rate", rate, "other", 1)));
		assertThat(second.get(1).isAllowed()).isFalse();
		assertThat(store.peek(new Acquisition("slots", TWO, "mixed", 1)).remaining()).as("no slot held").isEqualTo(2);
		assertThat(store.leases.held()).isZero();
	}

	/** Rounds of 32 threads, half on each store, each taking a slot and holding it: exactly 5 get one. */
	private void exactUnderContention(RedisRateLimitStore one, RedisRateLimitStore two, String key) throws Exception {
		ExecutorService threads = Executors.newFixedThreadPool(32);
		try {
			for (int round = 0; round < 5; round++) {
				CountDownLatch start = new CountDownLatch(1);
				List<Future<Acquisition>> results = new ArrayList<>();
				for (int i = 0; i < 32; i++) {
					RedisRateLimitStore store = (i % 2 == 0) ? one : two;
					results.add(threads.submit(() -> {
						start.await();
						Acquisition acquisition = new Acquisition("slots", FIVE, key, 1);
						return store.tryAcquire(acquisition).isAllowed() ? acquisition : null;
					}));
				}
				start.countDown();
				List<Acquisition> admitted = new ArrayList<>();
				List<RedisRateLimitStore> by = new ArrayList<>();
				for (int i = 0; i < results.size(); i++) {
					Acquisition acquisition = results.get(i).get(30, TimeUnit.SECONDS);
					if (acquisition != null) {
						admitted.add(acquisition);
						by.add((i % 2 == 0) ? one : two);
					}
				}
				assertThat(admitted).as("round %d", round).hasSize(5);
				assertThat(one.leases.held() + two.leases.held()).isEqualTo(5);
				for (int i = 0; i < admitted.size(); i++) {
					by.get(i).release(admitted.get(i));
				}
				assertThat(one.leases.held() + two.leases.held()).isZero();
			}
			// Threads that take, hold a moment and give back: never more than 5 at once.
			AtomicInteger inFlight = new AtomicInteger();
			AtomicInteger most = new AtomicInteger();
			AtomicInteger admissions = new AtomicInteger();
			List<Future<?>> loops = new ArrayList<>();
			for (int i = 0; i < 32; i++) {
				RedisRateLimitStore store = (i % 2 == 0) ? one : two;
				loops.add(threads.submit(() -> {
					for (int n = 0; n < 20; n++) {
						Acquisition acquisition = new Acquisition("slots", FIVE, key, 1);
						if (store.tryAcquire(acquisition).isAllowed()) {
							admissions.incrementAndGet();
							most.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
							Thread.yield();
							inFlight.decrementAndGet();
							store.release(acquisition);
						}
					}
					return null;
				}));
			}
			for (Future<?> loop : loops) {
				loop.get(60, TimeUnit.SECONDS);
			}
			assertThat(most.get()).isLessThanOrEqualTo(5);
			assertThat(admissions.get()).isPositive();
			assertThat(one.fallbacks() + two.fallbacks()).isZero();
		}
		finally {
			threads.shutdownNow();
		}
	}

	@Test
	void aCrashedInstanceFreesItsSlotsOnceTheirLeasesExpire() {
		RedisRateLimitStore crashing = clocked(Duration.ofSeconds(5));
		RedisRateLimitStore survivor = clocked(Duration.ofSeconds(5));
		assertThat(crashing.tryAcquire(new Acquisition("slots", TWO, "k", 1)).isAllowed()).isTrue();
		assertThat(crashing.tryAcquire(new Acquisition("slots", TWO, "k", 1)).isAllowed()).isTrue();
		Decision rejected = survivor.tryAcquire(new Acquisition("slots", TWO, "k", 1));
		assertThat(rejected.isAllowed()).isFalse();
		assertThat(rejected.retryAfterNanos()).isEqualTo(Duration.ofSeconds(1).toNanos());
		assertThat(rejected.remaining()).isZero();
		crashing.close();
		this.nowMicros.addAndGet(Duration.ofMillis(4_999).toNanos() / 1000);
		assertThat(survivor.tryAcquire(new Acquisition("slots", TWO, "k", 1)).isAllowed()).as("leases still valid")
			.isFalse();
		this.nowMicros.addAndGet(1_001);
		Decision admitted = survivor.tryAcquire(new Acquisition("slots", TWO, "k", 1));
		assertThat(admitted.isAllowed()).as("both leases expired").isTrue();
		assertThat(admitted.remaining()).isEqualTo(1);
	}

	@Test
	void refreshedLeasesNeverExpireAndAReleaseFreesExactlyOneSlot() {
		RedisRateLimitStore holder = clocked(Duration.ofSeconds(3));
		RedisRateLimitStore other = clocked(Duration.ofSeconds(3));
		Acquisition first = new Acquisition("slots", TWO, "k", 1);
		assertThat(holder.tryAcquire(first).isAllowed()).isTrue();
		assertThat(holder.tryAcquire(new Acquisition("slots", TWO, "k", 1)).isAllowed()).isTrue();
		for (int i = 0; i < 5; i++) {
			this.nowMicros.addAndGet(Duration.ofSeconds(2).toNanos() / 1000);
			holder.leases.refresh();
			assertThat(other.tryAcquire(new Acquisition("slots", TWO, "k", 1)).isAllowed()).as("after %d s", 2 * i + 2)
				.isFalse();
		}
		holder.release(first);
		assertThat(other.tryAcquire(new Acquisition("slots", TWO, "k", 1)).isAllowed()).isTrue();
		assertThat(other.tryAcquire(new Acquisition("slots", TWO, "k", 1)).isAllowed()).isFalse();
	}

	@Test
	void leasesLiveOnTheServersClockWhileRefreshedAndDieWithTheirInstance() throws Exception {
		RedisRateLimitStore holder = track(RedisRateLimitStore.builder(redis.connectionFactory())
			.timeout(Duration.ofSeconds(2))
			.leaseExpiry(Duration.ofMillis(1_500))
			.build());
		RedisRateLimitStore other = store(redis.connectionFactory());
		assertThat(holder.tryAcquire(new Acquisition("slots", TWO, "real", 1)).isAllowed()).isTrue();
		assertThat(holder.tryAcquire(new Acquisition("slots", TWO, "real", 1)).isAllowed()).isTrue();
		// Longer than the lease expiry: the refresher (every 500 ms) keeps both leases; a stall of up to a second
		// (a loaded machine, tests in two JVMs) leaves them alive.
		Thread.sleep(2_000);
		assertThat(other.tryAcquire(new Acquisition("slots", TWO, "real", 1)).isAllowed()).isFalse();
		holder.close();
		assertThat(other.tryAcquire(new Acquisition("slots", TWO, "real", 1)).isAllowed()).isFalse();
		boolean admitted = false;
		for (int i = 0; i < 400 && !admitted; i++) {
			Thread.sleep(25);
			Acquisition probe = new Acquisition("slots", TWO, "real", 1);
			admitted = other.tryAcquire(probe).isAllowed();
			if (admitted) {
				other.release(probe);
			}
		}
		assertThat(admitted).as("the crashed instance's slots expired (1.5 s after its last refresh)").isTrue();
		assertThat(redis.commands().pttl("rate-limit:{slots:real}")).as("the key dies with its leases").isLessThan(0);
	}

	@Test
	void noRejectionIsKeptInProcess() {
		RedisRateLimitStore one = store(redis.connectionFactory());
		RedisRateLimitStore two = store(redis.connectionFactory());
		Limit single = Limit.builder().algorithm(Algorithm.CONCURRENCY).limit(1).build();
		Acquisition held = new Acquisition("slots", single, "k", 1);
		assertThat(one.tryAcquire(held).isAllowed()).isTrue();
		assertThat(two.tryAcquire(new Acquisition("slots", single, "k", 1)).isAllowed()).isFalse();
		one.release(held);
		assertThat(two.tryAcquire(new Acquisition("slots", single, "k", 1)).isAllowed())
			.as("a slot is back the moment it is released, on every instance").isTrue();
		assertThat(two.decider.cachedRejections.sum()).isZero();
	}

	@Test
	void aSlotOnFailureGrantsIsGivenBackWhereItWasTaken() {
		ManualClock clock = new ManualClock();
		CaffeineRateLimitStore local = new CaffeineRateLimitStore(1000, clock);
		LettuceConnectionFactory nowhere = RedisExtension.fastReconnectingFactory(freePort());
		try {
			RedisRateLimitStore store = track(RedisRateLimitStore.builder(nowhere)
				.timeout(Duration.ofMillis(50))
				.onFailure(OnFailure.LOCAL)
				.localStore(local)
				.build());
			Limit single = Limit.builder().algorithm(Algorithm.CONCURRENCY).limit(1).build();
			Acquisition held = new Acquisition("slots", single, "k", 1);
			assertThat(store.tryAcquire(held).isAllowed()).isTrue();
			assertThat(store.tryAcquire(new Acquisition("slots", single, "k", 1)).isAllowed()).isFalse();
			assertThat(store.leases.held()).as("nothing to refresh in Redis").isZero();
			store.release(held);
			assertThat(local.peek(held).remaining()).isEqualTo(1);
			assertThat(store.tryAcquire(new Acquisition("slots", single, "k", 1)).isAllowed()).isTrue();
		}
		finally {
			nowhere.destroy();
		}
	}

	/**
	 * The script's counter agrees with the in-process one, decision by decision: random acquisitions and
	 * releases of several keys and limits (a cost above 1 included), no lease expiring.
	 */
	@Test
	void theScriptAgreesWithTheInProcessCounter() {
		RedisRateLimitStore lua = clocked(Duration.ofHours(1));
		for (int sequence = 0; sequence < 8; sequence++) {
			Random random = new Random(4_200L + sequence);
			CaffeineRateLimitStore java = new CaffeineRateLimitStore(1000, new ManualClock());
			List<Acquisition> held = new ArrayList<>();
			List<Limit> limits = Arrays.asList(limit(1 + random.nextInt(4)), limit(1 + random.nextInt(4)));
			for (int step = 0; step < 50; step++) {
				if (!held.isEmpty() && random.nextInt(3) == 0) {
					Acquisition release = held.remove(random.nextInt(held.size()));
					assertThat(summary(lua.release(release))).as("sequence %d step %d: release", sequence, step)
						.isEqualTo(summary(java.release(release)));
					continue;
				}
				Limit limit = limits.get(random.nextInt(limits.size()));
				Acquisition acquisition = new Acquisition("agree-" + sequence, limit, "key-" + random.nextInt(2),
						1 + random.nextInt((int) limit.limit()));
				Decision expected = java.tryAcquire(acquisition);
				assertThat(summary(lua.tryAcquire(acquisition))).as("sequence %d step %d: %s", sequence, step, acquisition)
					.isEqualTo(summary(expected));
				assertThat(summary(lua.peek(acquisition))).isEqualTo(summary(java.peek(acquisition)));
				if (expected.isAllowed()) {
					held.add(acquisition);
				}
			}
		}
	}

	private static Limit limit(long limit) {
		return Limit.builder().algorithm(Algorithm.CONCURRENCY).limit(limit).build();
	}

	private static String summary(Decision decision) {
		return (decision.isAllowed() ? "allowed" : "rejected") + " remaining=" + decision.remaining() + " retry="
				+ decision.retryAfterNanos() + " reset=" + decision.resetNanos() + " next=" + decision.nextNanos();
	}

	private RedisRateLimitStore store(RedisConnectionFactory factory) {
		return track(RedisRateLimitStore.builder(factory).timeout(Duration.ofSeconds(5)).build());
	}

	/** A store on the test's clock, whose leases only a test refreshes. */
	private RedisRateLimitStore clocked(Duration leaseExpiry) {
		return track(RedisRateLimitStore.builder(redis.connectionFactory())
			.timeout(Duration.ofSeconds(5))
			.leaseExpiry(leaseExpiry)
			.withoutLeaseRefresher()
			.clock(this.nowMicros::get)
			.build());
	}

	private RedisRateLimitStore track(RedisRateLimitStore store) {
		this.stores.add(store);
		return store;
	}

	private static synchronized RedisConnectionFactory clusterFactory() {
		if (clusterFactory == null) {
			cluster = TestRedisCluster.shared();
			clusterFactory = cluster.connectionFactory();
		}
		return clusterFactory;
	}

	private static int freePort() {
		try (java.net.ServerSocket socket = new java.net.ServerSocket(0)) {
			return socket.getLocalPort();
		}
		catch (java.io.IOException ex) {
			throw new java.io.UncheckedIOException(ex);
		}
	}
}
