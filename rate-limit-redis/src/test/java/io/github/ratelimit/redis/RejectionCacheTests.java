package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.Decision;
import io.github.ratelimit.core.Limit;
import io.github.ratelimit.core.OnFailure;

import io.github.ratelimit.testsupport.RedisProcess;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Rejections kept in process: a flood on a key Redis rejected costs about one script call per key per
 * Retry-After (counted by Redis itself, {@code INFO commandstats}); a cheaper request, a release, a
 * reset or a changed limit goes to Redis again; another instance's reset is seen within the max age.
 * The cache's own rules are checked with explicit times.
 */
class RejectionCacheTests {

	@RegisterExtension
	static final RedisExtension redis = new RedisExtension();

	private static final Limit LIMIT = Limit.builder().limit(2).period(Duration.ofHours(1)).build();

	private static final Acquisition ACQUISITION = new Acquisition("api", LIMIT, "k", 1);

	private final List<RedisRateLimitStore> stores = new ArrayList<>();

	@BeforeEach
	void flush() {
		redis.commands().flushall();
	}

	@AfterEach
	void close() {
		this.stores.forEach(RedisRateLimitStore::close);
	}

	private RedisRateLimitStore store(Duration maxAge) {
		// A long timeout: on a busy machine a first call may be slow, and on-failure must decide nothing here.
		RedisRateLimitStore store = RedisRateLimitStore.builder(redis.connectionFactory())
			.rejectionCache(maxAge)
			.timeout(Duration.ofSeconds(10))
			.onFailure(OnFailure.DENY)
			.build();
		this.stores.add(store);
		return store;
	}

	@Test
	void aFloodOnARejectedKeyCostsAboutOneCallPerMaxAge() throws Exception {
		RedisRateLimitStore store = store(Duration.ofSeconds(1));
		store.tryAcquire(ACQUISITION);
		store.tryAcquire(ACQUISITION);
		long callsBefore = scriptCalls();
		long start = System.nanoTime();
		ExecutorService threads = Executors.newFixedThreadPool(16);
		AtomicInteger allowed = new AtomicInteger();
		List<Future<?>> futures = new ArrayList<>();
		for (int t = 0; t < 16; t++) {
			futures.add(threads.submit(() -> {
				for (int i = 0; i < 2_000; i++) {
					if (store.tryAcquire(ACQUISITION).isAllowed()) {
						allowed.incrementAndGet();
					}
				}
			}));
		}
		for (Future<?> future : futures) {
			future.get();
		}
		threads.shutdown();
		long seconds = Duration.ofNanos(System.nanoTime() - start).toSeconds();
		long calls = scriptCalls() - callsBefore;
		System.out.println("32,000 decisions on a rejected key: " + calls + " script calls, "
				+ store.decider.cachedRejections.sum() + " answered from the cache");
		assertThat(allowed).hasValue(0);
		// Each thread may call once before the first rejection is kept, then one call per second at most.
		assertThat(calls).isLessThanOrEqualTo(16 + 16 * (seconds + 1));
		// Before a rejection is kept, each of the 16 threads may ask Redis once (coalesced calls may carry several).
		assertThat(store.decider.cachedRejections.sum()).isGreaterThanOrEqualTo(32_000 - 16 * (seconds + 2));
		assertThat(store.errors()).isZero();
	}

	@Test
	void aCheaperRequestAReleaseAResetOrAChangedLimitAsksRedis() {
		RedisRateLimitStore store = store(Duration.ofMinutes(1));
		Acquisition two = new Acquisition("api", Limit.builder().limit(3).period(Duration.ofHours(1)).build(), "k2", 2);
		assertThat(store.tryAcquire(two).isAllowed()).isTrue();
		assertThat(store.tryAcquire(two).isAllowed()).as("1 left: a cost of 2 is rejected").isFalse();
		long calls = scriptCalls();
		assertThat(store.tryAcquire(two).isAllowed()).isFalse();
		assertThat(scriptCalls()).as("kept").isEqualTo(calls);
		Acquisition one = new Acquisition("api", two.limit(), "k2", 1);
		assertThat(store.tryAcquire(one).isAllowed()).as("a cheaper request goes to Redis").isTrue();

		assertThat(store.tryAcquire(ACQUISITION).isAllowed()).isTrue();
		assertThat(store.tryAcquire(ACQUISITION).isAllowed()).isTrue();
		assertThat(store.tryAcquire(ACQUISITION).isAllowed()).isFalse();
		store.release(ACQUISITION);
		assertThat(store.tryAcquire(ACQUISITION).isAllowed()).as("released").isTrue();
		assertThat(store.tryAcquire(ACQUISITION).isAllowed()).isFalse();
		store.reset("api", "k");
		assertThat(store.tryAcquire(ACQUISITION).isAllowed()).as("reset").isTrue();
		assertThat(store.tryAcquire(ACQUISITION).isAllowed()).isTrue();
		assertThat(store.tryAcquire(ACQUISITION).isAllowed()).isFalse();
		Acquisition raised = new Acquisition("api", Limit.builder().limit(4).period(Duration.ofHours(1)).build(), "k", 1);
		long before = scriptCalls();
		store.tryAcquire(raised);
		assertThat(scriptCalls()).as("a raised limit asks Redis").isEqualTo(before + 1);
	}

	@Test
	void aResetOnAnotherInstanceIsSeenWithinTheMaxAge() {
		RedisRateLimitStore one = store(Duration.ofMillis(300));
		RedisRateLimitStore two = store(Duration.ofMillis(300));
		one.tryAcquire(ACQUISITION);
		one.tryAcquire(ACQUISITION);
		// Before the call whose rejection is kept: it holds 300 ms from its send, at least.
		long start = System.nanoTime();
		assertThat(one.tryAcquire(ACQUISITION).isAllowed()).isFalse();
		assertThat(one.tryAcquire(ACQUISITION).retryAfterNanos()).as("Redis' Retry-After, not the cache's age")
			.isGreaterThan(Duration.ofMinutes(29).toNanos());
		two.reset("api", "k");
		// A real wait: the cache counts real time, as the instances would.
		while (!one.tryAcquire(ACQUISITION).isAllowed()) {
			assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
			RedisProcess.sleep(20);
		}
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(298));
		assertThat(one.errors()).isZero();
	}

	@Test
	void anEntryHoldsUntilItsRetryAfterAtMostItsMaxAge() {
		RejectionCache cache = new RejectionCache(Duration.ofSeconds(5).toNanos());
		long sent = 1_000_000_000L;
		Decision rejected = Decision.rejected(2, 0, Duration.ofSeconds(60).toNanos(), Duration.ofSeconds(2).toNanos());
		cache.put(ACQUISITION, rejected, sent);
		Decision found = cache.find(ACQUISITION, sent + Duration.ofSeconds(1).toNanos());
		assertThat(found).isNotNull();
		assertThat(found.isAllowed()).isFalse();
		assertThat(found.retryAfterNanos()).isEqualTo(Duration.ofSeconds(1).toNanos());
		assertThat(cache.find(new Acquisition("api", LIMIT, "other", 1), sent)).isNull();
		assertThat(found.resetNanos()).isEqualTo(Duration.ofSeconds(59).toNanos());
		assertThat(cache.find(ACQUISITION, sent + Duration.ofSeconds(2).toNanos())).as("Retry-After passed").isNull();
		assertThat(cache.size()).isZero();

		cache.put(ACQUISITION, Decision.rejected(2, 0, 0, Duration.ofSeconds(60).toNanos()), sent);
		assertThat(cache.find(ACQUISITION, sent + Duration.ofMillis(4_990).toNanos())).isNotNull();
		assertThat(cache.find(ACQUISITION, sent + Duration.ofSeconds(5).toNanos())).as("max age").isNull();

		cache.put(ACQUISITION, rejected, sent);
		cache.drop("api", "k");
		assertThat(cache.find(ACQUISITION, sent)).isNull();
	}

	@Test
	void onlyRatesWithoutAWaitAreKept() {
		RejectionCache cache = new RejectionCache(Duration.ofSeconds(1).toNanos());
		assertThat(cache.applies(ACQUISITION)).isTrue();
		for (Algorithm algorithm : Algorithm.values()) {
			Limit limit = limit(algorithm, 2, Duration.ofMinutes(1));
			assertThat(cache.applies(new Acquisition("api", limit, "k", 1))).isEqualTo(!"concurrency".equals(algorithm.id()));
		}
		assertThat(cache.applies(new Acquisition("api", LIMIT, "k", 1, Duration.ofSeconds(1).toNanos()))).isFalse();
		assertThat(new RejectionCache(0).applies(ACQUISITION)).isFalse();
	}

	@Test
	void entriesAreBoundedAndAFullCacheIsSweptOncePerIntervalNotOncePerRejection() {
		// A flood of distinct rejected keys that keeps the cache full: each rejection after that must not read
		// every entry again (a sweep of 100,000 entries per rejection, milliseconds of CPU each).
		RejectionCache cache = new RejectionCache(Duration.ofMinutes(1).toNanos());
		Decision rejected = Decision.rejected(2, 0, 0, Duration.ofMinutes(1).toNanos());
		long now = System.nanoTime();
		for (int i = 0; i < RejectionCache.MAX_ENTRIES + 2_000; i++) {
			cache.put(new Acquisition("api", LIMIT, "k" + i, 1), rejected, now);
		}
		assertThat(cache.size()).isEqualTo(RejectionCache.MAX_ENTRIES);
		// One sweep per sixteenth of the max age (3.75 s); the loop takes well under a second, or two on a slow
		// machine, against 2,000 sweeps when every rejection swept.
		assertThat(cache.sweeps()).isBetween(1L, 2L);
	}

	private static long scriptCalls() {
		String stats = redis.commands().info("commandstats");
		long calls = 0;
		for (String line : stats.split("\r?\n")) {
			if (line.startsWith("cmdstat_evalsha:") || line.startsWith("cmdstat_eval:")) {
				String field = line.substring(line.indexOf("calls=") + 6);
				calls += Long.parseLong(field.substring(0, field.indexOf(',')));
			}
		}
		return calls;
	}

	/** A limit of any algorithm: a concurrency limit has no period. */
	private static Limit limit(Algorithm algorithm, long limit, Duration period) {
		Limit.Builder builder = Limit.builder().algorithm(algorithm).limit(limit);
		return (algorithm.isRate() ? builder.period(period) : builder).build();
	}
}
