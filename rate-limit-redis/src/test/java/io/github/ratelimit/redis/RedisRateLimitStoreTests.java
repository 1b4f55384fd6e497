package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.List;
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

import org.springframework.data.redis.connection.ClusterSlotHashUtil;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.Decision;
import io.github.ratelimit.core.Limit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The store on a real Redis, with the server's clock: key layout and TTLs, script reloading,
 * all-or-nothing acquisition (one script call, and the compensating path used on clusters), Jedis,
 * and exactness under many threads.
 */
class RedisRateLimitStoreTests {

	@RegisterExtension
	static final RedisExtension redis = new RedisExtension();

	private static final Limit PER_MINUTE = Limit.builder().limit(5).period(Duration.ofMinutes(1)).build();

	private static final Limit ONE_PER_MINUTE = Limit.builder().limit(1).period(Duration.ofMinutes(1)).build();

	private RedisRateLimitStore store;

	@BeforeEach
	void createStore() {
		redis.commands().flushall();
		this.store = RedisRateLimitStore.builder(redis.connectionFactory()).timeout(Duration.ofSeconds(2)).build();
	}

	@AfterEach
	void closeStore() {
		this.store.close();
	}

	@Test
	void aCheckReadsWithoutWritingAndCreatesNoKey() {
		Acquisition alice = new Acquisition("login", PER_MINUTE, "user:alice", 2);
		Decision fresh = this.store.check(alice);
		assertThat(fresh.isAllowed()).isTrue();
		assertThat(fresh.remaining()).as("nothing taken").isEqualTo(5);
		assertThat(redis.commands().keys("*")).as("no key for a check").isEmpty();
		this.store.tryAcquire(alice);
		this.store.tryAcquire(alice);
		assertThat(this.store.check(alice).remaining()).isEqualTo(1);
		Decision rejected = this.store.check(alice);
		assertThat(rejected.isAllowed()).isFalse();
		assertThat(rejected.retryAfterNanos()).isPositive();
		Acquisition bob = new Acquisition("login", ONE_PER_MINUTE, "user:bob", 1);
		assertThat(this.store.checkAll(List.of(alice, bob))).extracting(Decision::isAllowed).containsExactly(false, true);
		assertThat(this.store.peek(alice).remaining()).isEqualTo(1);
	}

	@Test
	void keysCarryAHashTagAndExpireWhenTheStateIsFreshAgain() {
		Limit limit = Limit.builder().limit(10).period(Duration.ofSeconds(10)).build();
		long before = System.nanoTime();
		Decision decision = this.store.tryAcquire(new Acquisition("api", limit, "ip:10.0.0.1", 5));
		long ttl = redis.commands().pttl("rate-limit:{api:ip:10.0.0.1}");
		long elapsedMillis = Duration.ofNanos(System.nanoTime() - before).toMillis() + 1;
		assertThat(decision.isAllowed()).isTrue();
		assertThat(decision.remaining()).isEqualTo(5);
		assertThat(redis.commands().keys("*")).containsExactly("rate-limit:{api:ip:10.0.0.1}");
		// Five tokens refill in 5 s: the key lives that long (rounded up to the millisecond, plus one), less
		// what passed between the write and the read.
		assertThat(ttl).isBetween(5_000L - elapsedMillis, 5_002L);
	}

	@Test
	void everyAlgorithmSetsATtl() {
		for (Algorithm algorithm : Algorithm.values()) {
			Limit limit = limit(algorithm, 3, Duration.ofSeconds(30));
			this.store.tryAcquire(new Acquisition(algorithm.id(), limit, "k", 1));
			String key = this.store.redisKey(algorithm.id(), "k");
			assertThat(redis.commands().pttl(key)).as(key).isBetween(1L, 60_002L);
		}
	}

	@Test
	void spentTokensStaySpentWhenAKeysLimitChanges() {
		for (Algorithm algorithm : Algorithm.values()) {
			Limit two = limit(algorithm, 2, Duration.ofHours(1));
			Limit four = limit(algorithm, 4, Duration.ofHours(1));
			String id = "change-" + algorithm.id();
			assertThat(this.store.tryAcquire(new Acquisition(id, two, "k", 1)).isAllowed()).isTrue();
			assertThat(this.store.tryAcquire(new Acquisition(id, two, "k", 1)).isAllowed()).isTrue();
			assertThat(this.store.tryAcquire(new Acquisition(id, two, "k", 1)).isAllowed()).isFalse();
			assertThat(this.store.tryAcquire(new Acquisition(id, four, "k", 1)).isAllowed()).as(algorithm.id()).isTrue();
			assertThat(this.store.tryAcquire(new Acquisition(id, four, "k", 1)).isAllowed()).as(algorithm.id()).isTrue();
			assertThat(this.store.tryAcquire(new Acquisition(id, four, "k", 1)).isAllowed())
				.as("%s: exactly two more", algorithm.id()).isFalse();
			assertThat(this.store.tryAcquire(new Acquisition(id, two, "k", 1)).isAllowed())
				.as("%s: back to the smaller limit buys nothing", algorithm.id()).isFalse();
		}
	}

	@Test
	void aBucketMovedBetweenLimitsOfExtremeRatiosStaysSpent() {
		// A million a second, half spent, then one a century: the debt carried would be beyond what a script
		// can write (a state of 10^21 us, a TTL Redis refuses), and every request of the key would fail.
		for (Algorithm algorithm : List.of(Algorithm.TOKEN_BUCKET, Algorithm.LEAKY_BUCKET)) {
			Limit fast = limit(algorithm, 1_000_000, Duration.ofSeconds(1));
			Limit slow = limit(algorithm, 1, Duration.ofDays(36_500));
			String id = "extreme-" + algorithm.id();
			assertThat(this.store.tryAcquire(new Acquisition(id, fast, "alone", 500_000)).isAllowed()).isTrue();
			assertThat(this.store.tryAcquire(new Acquisition(id, slow, "alone", 1)).isAllowed()).as(algorithm.id())
				.isFalse();
			// With another key in the same call: the driver's batch, whose prelude moves states too.
			assertThat(this.store.tryAcquire(new Acquisition(id, fast, "batched", 500_000)).isAllowed()).isTrue();
			List<Decision> batched = this.store.tryAcquireAll(List.of(new Acquisition(id, slow, "batched", 1),
					new Acquisition(id + "-other", PER_MINUTE, "k", 1)));
			assertThat(batched.get(0).isAllowed()).as(algorithm.id()).isFalse();
			assertThat(batched.get(0).retryAfterNanos()).isEqualTo(Duration.ofDays(36_500).toNanos());
			assertThat(redis.commands().pttl(this.store.redisKey(id, "alone"))).as("a TTL Redis took").isPositive();
		}
		assertThat(this.store.errors()).as("no script failed").isZero();
	}

	@Test
	void aBucketRemembersTheIntervalItWasWrittenWith() {
		Limit two = Limit.builder().limit(2).period(Duration.ofHours(1)).build();
		this.store.tryAcquire(new Acquisition("api", two, "k", 1));
		String value = redis.commands().get(this.store.redisKey("api", "k"));
		assertThat(value).endsWith(" " + (two.emissionIntervalNanos() / 1000));
	}

	@Test
	void limitIdsAndKeysNeverShareARedisKey() {
		assertThat(this.store.redisKey("a:b", "c")).isNotEqualTo(this.store.redisKey("a", "b:c"));
		assertThat(this.store.redisKey("a", "{b}")).isEqualTo("rate-limit:{a:%7Bb%7D}");
		assertThat(this.store.redisKey("a", "#x")).isNotEqualTo(this.store.redisKey("a", "%23x"));
		String longKey = "k".repeat(10_000);
		String hashed = this.store.redisKey("api", longKey);
		assertThat(hashed).hasSizeLessThan(100).startsWith("rate-limit:{api:#");
		assertThat(hashed).isNotEqualTo(this.store.redisKey("api", longKey + "k"));
	}

	@Test
	void peekReadsAndResetForgets() {
		Acquisition acquisition = new Acquisition("api", PER_MINUTE, "k", 2);
		this.store.tryAcquire(acquisition);
		assertThat(this.store.peek(acquisition).remaining()).isEqualTo(3);
		assertThat(this.store.peek(acquisition).remaining()).isEqualTo(3);
		assertThat(this.store.check(acquisition).isAllowed()).isTrue();
		assertThat(this.store.peek(acquisition).remaining()).isEqualTo(3);
		this.store.reset("api", "k");
		assertThat(redis.commands().exists("rate-limit:{api:k}")).isZero();
		assertThat(this.store.peek(acquisition).remaining()).isEqualTo(5);
	}

	@Test
	void reloadsItsScriptsWhenRedisHasForgottenThem() {
		Acquisition acquisition = new Acquisition("api", PER_MINUTE, "k", 1);
		assertThat(this.store.tryAcquire(acquisition).remaining()).isEqualTo(4);
		redis.commands().scriptFlush();
		assertThat(this.store.tryAcquire(acquisition).remaining()).isEqualTo(3);
		assertThat(this.store.errors()).isZero();
	}

	@Test
	void aRejectedRequestConsumesNothingFromItsOtherLimitsInOneScriptCall() {
		assertNothingConsumedOnRejection(this.store);
	}

	@Test
	void onAClusterWithKeysInSeveralSlotsAcquisitionsAreCompensated() {
		assertThat(ClusterSlotHashUtil.calculateSlot(this.store.redisKey("api", "k")))
			.isNotEqualTo(ClusterSlotHashUtil.calculateSlot(this.store.redisKey("strict", "k")));
		try (RedisRateLimitStore clustered = RedisRateLimitStore.builder(redis.connectionFactory()).timeout(Duration.ofSeconds(2))
			.clustered(true)
			.build()) {
			assertNothingConsumedOnRejection(clustered);
		}
	}

	private void assertNothingConsumedOnRejection(RedisRateLimitStore store) {
		List<Acquisition> both = List.of(new Acquisition("api", PER_MINUTE, "k", 1),
				new Acquisition("strict", ONE_PER_MINUTE, "k", 1));
		assertThat(store.tryAcquireAll(both)).allMatch(Decision::isAllowed);
		List<Decision> rejected = store.tryAcquireAll(both);
		assertThat(rejected.get(1).isAllowed()).isFalse();
		assertThat(rejected.get(0).isAllowed()).isTrue();
		assertThat(rejected.get(0).remaining()).isEqualTo(4);
		// The first limit still has 4 tokens: the rejected request took none.
		assertThat(store.tryAcquire(both.get(0)).remaining()).isEqualTo(3);
	}

	@Test
	void delayModeReservesAhead() {
		Limit limit = Limit.builder().limit(2).period(Duration.ofSeconds(10)).build();
		Acquisition waiting = new Acquisition("api", limit, "k", 1, Duration.ofSeconds(6).toNanos());
		long before = System.nanoTime();
		assertThat(this.store.tryAcquire(waiting).waitNanos()).isZero();
		assertThat(this.store.tryAcquire(waiting).waitNanos()).isZero();
		Decision delayed = this.store.tryAcquire(waiting);
		long elapsed = System.nanoTime() - before;
		assertThat(delayed.isAllowed()).isTrue();
		// The third token is due 5 s after the first request, less what passed since (Redis' clock).
		assertThat(delayed.waitNanos()).isBetween(Duration.ofSeconds(5).toNanos() - elapsed - 1_000_000,
				Duration.ofSeconds(5).toNanos());
		assertThat(this.store.tryAcquire(waiting).isAllowed()).isFalse();
	}

	@Test
	void worksOnJedis() {
		JedisConnectionFactory jedis = new JedisConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", redis.port()));
		jedis.afterPropertiesSet();
		jedis.start();
		try (RedisRateLimitStore store = RedisRateLimitStore.builder(jedis).timeout(Duration.ofSeconds(2)).build()) {
			Acquisition acquisition = new Acquisition("api", PER_MINUTE, "jedis", 1);
			assertThat(store.tryAcquire(acquisition).remaining()).isEqualTo(4);
			redis.commands().scriptFlush();
			assertThat(store.tryAcquire(acquisition).remaining()).isEqualTo(3);
			assertNothingConsumedOnRejection(store);
			assertThat(store.errors()).isZero();
		}
		finally {
			jedis.destroy();
		}
	}

	@Test
	void exactlyTheBurstIsAdmittedFromManyThreads() throws Exception {
		Limit limit = Limit.builder().limit(100).period(Duration.ofHours(1)).build();
		Acquisition acquisition = new Acquisition("api", limit, "hot", 1);
		int threads = 32;
		AtomicInteger allowed = new AtomicInteger();
		CountDownLatch start = new CountDownLatch(1);
		ExecutorService executor = Executors.newFixedThreadPool(threads);
		try {
			List<Future<?>> futures = new java.util.ArrayList<>();
			for (int t = 0; t < threads; t++) {
				futures.add(executor.submit(() -> {
					start.await();
					for (int i = 0; i < 20; i++) {
						if (this.store.tryAcquire(acquisition).isAllowed()) {
							allowed.incrementAndGet();
						}
					}
					return null;
				}));
			}
			start.countDown();
			for (Future<?> future : futures) {
				future.get(60, TimeUnit.SECONDS);
			}
		}
		finally {
			executor.shutdownNow();
		}
		assertThat(allowed).hasValue(100);
		assertThat(this.store.errors()).isZero();
	}

	/** A limit of any algorithm: a concurrency limit has no period. */
	private static Limit limit(Algorithm algorithm, long limit, Duration period) {
		Limit.Builder builder = Limit.builder().algorithm(algorithm).limit(limit);
		return (algorithm.isRate() ? builder.period(period) : builder).build();
	}
}
