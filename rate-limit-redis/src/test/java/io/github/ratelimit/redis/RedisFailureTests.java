package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.CaffeineRateLimitStore;
import io.github.ratelimit.core.Decision;
import io.github.ratelimit.core.Limit;
import io.github.ratelimit.core.OnFailure;
import io.github.ratelimit.test.ManualClock;
import io.github.ratelimit.testsupport.RedisProcess;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the store does when Redis is killed, slow or unreachable: each on-failure choice, the
 * timeout, the breaker (opening, probing, closing, one log line per transition), the error count.
 * Latencies are measured and asserted generously (CI machines are slow): this is about never waiting
 * for a dead Redis, not about speed. The breakers' clock stands still unless a test moves it.
 */
@ExtendWith(OutputCaptureExtension.class)
class RedisFailureTests {

	@RegisterExtension
	static final RedisExtension redis = new RedisExtension();

	private static final Duration TIMEOUT = Duration.ofMillis(100);

	private static final Duration PROBE_INTERVAL = Duration.ofMillis(200);

	private static final Limit LIMIT = Limit.builder().limit(2).period(Duration.ofMinutes(1)).build();

	private static final Acquisition ACQUISITION = new Acquisition("api", LIMIT, "k", 1);

	private LettuceConnectionFactory factory;

	private final List<RedisRateLimitStore> stores = new ArrayList<>();

	/** The store's error count once warmed up. */
	private long errors;

	/** The store's fallback count once warmed up. */
	private long fallbacks;

	@BeforeEach
	void connect() {
		if (!redis.process().isRunning()) {
			redis.process().start();
		}
		redis.commands().flushall();
		this.factory = redis.newFastReconnectingFactory();
	}

	@AfterEach
	void close() {
		this.stores.forEach(RedisRateLimitStore::close);
		this.factory.destroy();
	}

	/** The breakers' clock: still unless a test moves it. */
	private final AtomicLong breakerNanos = new AtomicLong();

	private RedisRateLimitStore store(OnFailure onFailure) {
		RedisRateLimitStore store = RedisRateLimitStore.builder(this.factory)
			.timeout(TIMEOUT)
			.onFailure(onFailure)
			.localStore(new CaffeineRateLimitStore(1000, new ManualClock()))
			.breaker(3, PROBE_INTERVAL)
			.breakerClock(this.breakerNanos::get)
			.build();
		this.stores.add(store);
		warmUp(store);
		assertThat(store.tryAcquire(ACQUISITION).isAllowed()).isTrue();
		assertThat(store.fallbacks()).as("the first decision of the test reached Redis").isEqualTo(this.fallbacks);
		return store;
	}

	/**
	 * On a loaded machine the first calls can take longer than the 100 ms timeout and be decided by
	 * {@code on-failure}, which would spend the local budget or count as errors before the test starts.
	 * Warm up on other keys until a call reaches Redis in time and the breaker is closed; the counts
	 * the tests assert are then taken from that point.
	 */
	private void warmUp(RedisRateLimitStore store) {
		long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
		for (int i = 0; System.nanoTime() < deadline; i++) {
			long before = store.fallbacks();
			store.tryAcquire(new Acquisition("warm-up", LIMIT, "w" + i, 1));
			if (store.fallbacks() == before && store.isAvailable()) {
				break;
			}
			// A breaker the warm-up opened lets a probe through.
			this.breakerNanos.addAndGet(PROBE_INTERVAL.toNanos());
			RedisProcess.sleep(50);
		}
		assertThat(store.isAvailable()).as("Redis answers in time after the warm-up").isTrue();
		this.errors = store.errors();
		this.fallbacks = store.fallbacks();
	}

	@Test
	void allowFailsOpen() {
		RedisRateLimitStore store = store(OnFailure.ALLOW);
		redis.process().kill();
		for (int i = 0; i < 10; i++) {
			Decision decision = timed(() -> store.tryAcquire(ACQUISITION));
			assertThat(decision.isAllowed()).isTrue();
			assertThat(decision.remaining()).isEqualTo(1);
		}
		assertThat(store.fallbacks() - this.fallbacks).isEqualTo(10);
	}

	@Test
	void denyFailsClosed() {
		RedisRateLimitStore store = store(OnFailure.DENY);
		redis.process().kill();
		Decision decision = timed(() -> store.tryAcquire(ACQUISITION));
		assertThat(decision.isAllowed()).isFalse();
		assertThat(decision.retryAfterNanos()).isEqualTo(Duration.ofSeconds(1).toNanos());
		assertThat(timed(() -> store.tryAcquireAll(List.of(ACQUISITION, ACQUISITION)))).noneMatch(Decision::isAllowed);
	}

	@Test
	void localDecidesInProcess() {
		RedisRateLimitStore store = store(OnFailure.LOCAL);
		redis.process().kill();
		assertThat(timed(() -> store.tryAcquire(ACQUISITION)).isAllowed()).isTrue();
		assertThat(timed(() -> store.tryAcquire(ACQUISITION)).isAllowed()).isTrue();
		assertThat(timed(() -> store.tryAcquire(ACQUISITION)).isAllowed()).as("the local budget of 2 is spent").isFalse();
	}

	@Test
	void theBreakerStopsPayingTheTimeoutAndRecoversWhenRedisIsBack(CapturedOutput output) {
		RedisRateLimitStore store = store(OnFailure.ALLOW);
		redis.process().kill();
		List<Long> millis = new ArrayList<>();
		for (int i = 0; i < 50; i++) {
			long start = System.nanoTime();
			store.tryAcquire(ACQUISITION);
			millis.add((System.nanoTime() - start) / 1_000_000);
		}
		System.out.println("Decision latencies with Redis killed (ms): " + millis);
		assertThat(store.isAvailable()).isFalse();
		// 3 failures open the breaker; no probe interval passed (the breakers' clock stood still), so no other
		// call went to Redis: each would have been an error.
		assertThat(store.errors() - this.errors).isEqualTo(3);
		assertThat(output).containsOnlyOnce("Redis rate limit store failed");
		this.breakerNanos.addAndGet(PROBE_INTERVAL.toNanos());
		store.tryAcquire(ACQUISITION);
		store.tryAcquire(ACQUISITION);
		assertThat(store.errors() - this.errors).as("one probe once the interval passed").isEqualTo(4);

		redis.process().start();
		long back = System.nanoTime();
		while (!store.isAvailable() && System.nanoTime() - back < Duration.ofSeconds(30).toNanos()) {
			this.breakerNanos.addAndGet(PROBE_INTERVAL.toNanos());
			store.tryAcquire(ACQUISITION);
			RedisProcess.sleep(20);
		}
		System.out.println("Breaker closed " + (System.nanoTime() - back) / 1_000_000 + " ms after Redis restarted");
		assertThat(store.isAvailable()).isTrue();
		assertThat(output).containsOnlyOnce("Redis rate limit store answers again");
		assertThat(redisDecidesAgain(store)).as("Redis decides again: a fresh key allows 2, then rejects").isTrue();
	}

	/**
	 * Spends a fresh key's budget of 2 and asks for a third: {@code true} once all three reached Redis in
	 * time and it answered allowed, allowed, rejected. A call that a loaded machine made late (counted as an
	 * error, decided by {@code on-failure}) spoils that attempt only, so up to five attempts are made; with
	 * {@code ALLOW} as the fallback, no attempt can end rejected unless Redis itself decided.
	 */
	private boolean redisDecidesAgain(RedisRateLimitStore store) {
		for (int attempt = 0; attempt < 5; attempt++) {
			warmUp(store);
			Acquisition other = new Acquisition("api", LIMIT, "other-" + attempt, 1);
			boolean first = store.tryAcquire(other).isAllowed();
			boolean second = store.tryAcquire(other).isAllowed();
			boolean third = store.tryAcquire(other).isAllowed();
			if (store.errors() == this.errors) {
				assertThat(List.of(first, second, third)).containsExactly(true, true, false);
				return true;
			}
		}
		return false;
	}

	@Test
	void aSlowRedisCostsAtMostTheTimeout() {
		RedisRateLimitStore store = store(OnFailure.DENY);
		redis.process().freeze();
		try {
			long start = System.nanoTime();
			Decision decision = store.tryAcquire(ACQUISITION);
			long millis = (System.nanoTime() - start) / 1_000_000;
			System.out.println("Decision with Redis frozen: " + millis + " ms");
			// Decided while Redis is still frozen: by the store's timeout, not by Redis nor by the client's own
			// (a minute); the bound leaves room for a loaded machine's scheduling only.
			assertThat(decision.isAllowed()).isFalse();
			assertThat(millis).isLessThan(5_000);
			assertThat(store.errors() - this.errors).isEqualTo(1);
		}
		finally {
			redis.process().thaw();
		}
	}

	@Test
	void aRedisSlowerThanTheStartUpCheckIsNotReportedAsDown(CapturedOutput output) {
		// A first connection on a busy machine can take longer than the second the start-up waits: that is
		// no outage to report (the check keeps waiting in the background, as long as fail-fast would).
		LettuceConnectionFactory fresh = redis.newFastReconnectingFactory();
		redis.commands().clientPause(2_000);
		try (RedisRateLimitStore store = RedisRateLimitStore.builder(fresh).timeout(TIMEOUT).build()) {
			long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
			while (!output.toString().contains("answered the rate limiter's start-up check after")
					&& System.nanoTime() < deadline) {
				RedisProcess.sleep(50);
			}
			assertThat(output).contains("answered the rate limiter's start-up check after")
				.doesNotContain("did not answer the rate limiter at start-up");
		}
		finally {
			fresh.destroy();
		}
	}

	@Test
	void anUnreachableRedisAtStartUpCostsAtMostTheTimeout() {
		LettuceConnectionFactory nowhere = RedisExtension.fastReconnectingFactory(RedisProcess.freePort());
		try (RedisRateLimitStore store = RedisRateLimitStore.builder(nowhere).timeout(TIMEOUT).build()) {
			assertThat(timed(() -> store.tryAcquire(ACQUISITION)).isAllowed()).isTrue();
			assertThat(store.errors()).isEqualTo(1);
		}
		finally {
			nowhere.destroy();
		}
	}

	private static <T> T timed(Supplier<T> decision) {
		long start = System.nanoTime();
		T result = decision.get();
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(TIMEOUT.multipliedBy(10));
		return result;
	}
}
