package io.github.ratelimit.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Many threads on one key admit exactly the budget: never more, never fewer.
 */
public class ConcurrencyTests {

	private static final int THREADS = 64;

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
	void sixtyFourThreadsOnOneKeyAdmitExactlyTheBudget(Algorithm algorithm) throws Exception {
		ManualClock clock = new ManualClock();
		CaffeineRateLimitStore store = new CaffeineRateLimitStore(1000, clock);
		Limit limit = Limit.builder().algorithm(algorithm).limit(1000).period(Duration.ofHours(1)).build();
		Acquisition acquisition = new Acquisition("api", limit, "one-key", 1);
		for (int round = 0; round < 5; round++) {
			AtomicInteger allowed = hammer(THREADS, 100, () -> store.tryAcquire(acquisition).isAllowed());
			assertThat(allowed.get()).as("round %d", round).isEqualTo(1000);
			clock.advance(Duration.ofHours(2)); // the window counter still weighs the previous window
		}
	}

	/**
	 * Clients switching plans as fast as they can on one key (half the attempts on a plan of 1000, half
	 * on one of 2000 per hour): every switch moves the state, and what was spent is never lost nor
	 * counted twice, so exactly the larger plan's 2000 are admitted and the key is empty.
	 */
	@Test
	void sixtyFourThreadsSwitchingPlansOnOneKeySpendExactlyOneBudget() throws Exception {
		ManualClock clock = new ManualClock();
		CaffeineRateLimitStore store = new CaffeineRateLimitStore(1000, clock);
		Acquisition free = new Acquisition("api", Limit.builder().limit(1000).period(Duration.ofHours(1)).build(),
				"one-key", 1);
		Acquisition pro = new Acquisition("api", Limit.builder().limit(2000).period(Duration.ofHours(1)).build(),
				"one-key", 1);
		assertThat(alternately(store, free, pro)).isEqualTo(2000);
		assertThat(store.tryAcquire(pro).isAllowed()).isFalse();
		assertThat(store.peek(pro).remaining()).isZero();
	}

	/**
	 * Half the threads ask with an equal limit built again (another object, so the store's quick path,
	 * which goes by identity, sends them the full way): one key, one budget, exactly its 1000.
	 */
	@Test
	void sixtyFourThreadsWithEqualLimitsOfDistinctObjectsSpendExactlyOneBudget() throws Exception {
		ManualClock clock = new ManualClock();
		CaffeineRateLimitStore store = new CaffeineRateLimitStore(1000, clock);
		Acquisition first = new Acquisition("api", Limit.builder().limit(1000).period(Duration.ofHours(1)).build(),
				"one-key", 1);
		Acquisition again = new Acquisition("api", Limit.builder().limit(1000).period(Duration.ofHours(1)).build(),
				"one-key", 1);
		assertThat(alternately(store, first, again)).isEqualTo(1000);
		assertThat(store.peek(first).remaining()).isZero();
	}

	/** {@link #THREADS} threads, 100 attempts each, asking with {@code odd} and {@code even} in turn: the admitted count. */
	private static int alternately(CaffeineRateLimitStore store, Acquisition odd, Acquisition even) throws Exception {
		AtomicInteger attempt = new AtomicInteger();
		return hammer(THREADS, 100, () -> store.tryAcquire((attempt.incrementAndGet() % 2 == 1) ? odd : even).isAllowed())
			.get();
	}

	/**
	 * The moment an idle key's state expires is the moment its next requests arrive: threads that raced
	 * with the removal and threads that came after must still spend one budget.
	 */
	@Test
	void aKeyRevivedByManyThreadsAtOnceStillAdmitsExactlyItsBudget() throws Exception {
		ManualClock clock = new ManualClock();
		CaffeineRateLimitStore store = new CaffeineRateLimitStore(1000, clock);
		Limit limit = Limit.builder().limit(3).period(Duration.ofSeconds(3)).build();
		Acquisition acquisition = new Acquisition("api", limit, "one-key", 1);
		ExecutorService pool = Executors.newFixedThreadPool(8);
		try {
			for (int round = 0; round < 400; round++) {
				CountDownLatch start = new CountDownLatch(1);
				AtomicInteger allowed = new AtomicInteger();
				List<Future<?>> futures = new ArrayList<>();
				for (int t = 0; t < 8; t++) {
					futures.add(pool.submit(() -> {
						start.await();
						for (int i = 0; i < 2; i++) {
							if (store.tryAcquire(acquisition).isAllowed()) {
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
				assertThat(allowed.get()).as("round %d", round).isEqualTo(3);
				clock.advance(Duration.ofSeconds(5)); // past the idle expiry (3 s + 1 s of slack)
			}
		}
		finally {
			pool.shutdownNow();
		}
	}

	@Test
	void tokensRefillingWhileThreadsHammerAreSpentExactlyOnce() throws Exception {
		ManualClock clock = new ManualClock();
		CaffeineRateLimitStore store = new CaffeineRateLimitStore(1000, clock);
		// One token a second; the fake clock runs far faster than the threads, so the bucket is made
		// large enough that its state never idles out in this test.
		Limit limit = Limit.builder().limit(1000).period(Duration.ofSeconds(1000)).build();
		Acquisition acquisition = new Acquisition("api", limit, "one-key", 1);
		while (store.tryAcquire(acquisition).isAllowed()) {
			// start from an empty bucket, so that no refill overflows a full one
		}
		AtomicInteger ticks = new AtomicInteger();
		// Every 50th attempt moves the clock one second: one new token each time.
		AtomicInteger allowed = hammer(THREADS, 500, () -> {
			if (ticks.incrementAndGet() % 50 == 0) {
				clock.advance(Duration.ofSeconds(1));
			}
			return store.tryAcquire(acquisition).isAllowed();
		});
		long seconds = ticks.get() / 50;
		assertThat(allowed.get()).isEqualTo(seconds);
	}

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
	void delayedReservationsUnderConcurrencyNeverOverbook(Algorithm algorithm) throws Exception {
		ManualClock clock = new ManualClock();
		CaffeineRateLimitStore store = new CaffeineRateLimitStore(1000, clock);
		Limit limit = Limit.builder().algorithm(algorithm).limit(10).period(Duration.ofSeconds(10)).build();
		// Up to 5 s of waiting allowed: the buckets admit their burst plus 5 reservations, one per second.
		Acquisition acquisition = new Acquisition("api", limit, "one-key", 1, Duration.ofSeconds(5).toNanos());
		java.util.Set<Long> waits = java.util.concurrent.ConcurrentHashMap.newKeySet();
		AtomicInteger allowed = hammer(THREADS, 10, () -> {
			Decision decision = store.tryAcquire(acquisition);
			if (decision.isAllowed() && decision.waitNanos() > 0) {
				assertThat(waits.add(decision.waitNanos())).as("every reserved turn is distinct").isTrue();
			}
			return decision.isAllowed();
		});
		long expected = switch (algorithm) {
			case TOKEN_BUCKET -> 15; // 10 at once, then one a second for 5 seconds
			case LEAKY_BUCKET -> 6; // a queue: turns at 0..5 s, the queue holds 10 but the wait caps it
			default -> 10; // windows never wait
		};
		assertThat(allowed.get()).isEqualTo(expected);
	}

	@Test
	void allOrNothingUnderConcurrencyNeverOverSpendsEitherBudget() throws Exception {
		ManualClock clock = new ManualClock();
		CaffeineRateLimitStore store = new CaffeineRateLimitStore(1000, clock);
		Limit small = Limit.builder().limit(50).period(Duration.ofHours(1)).build();
		Limit large = Limit.builder().limit(300).period(Duration.ofHours(1)).build();
		List<Acquisition> both = List.of(new Acquisition("large", large, "k", 1), new Acquisition("small", small, "k", 1));
		List<Acquisition> largeOnly = List.of(new Acquisition("large", large, "k", 1));
		AtomicInteger calls = new AtomicInteger();
		AtomicInteger allowed = hammer(THREADS, 20, () -> {
			List<Acquisition> request = (calls.incrementAndGet() % 2 == 0) ? both : largeOnly;
			return store.tryAcquireAll(request).stream().allMatch(Decision::isAllowed);
		});
		// Every admitted request took exactly one token from "large"; rejected ones gave theirs back.
		long largeLeft = store.peek(largeOnly.get(0)).remaining();
		long smallLeft = store.peek(both.get(1)).remaining();
		assertThat(300 - largeLeft).isEqualTo(allowed.get());
		assertThat(smallLeft).isZero();
	}

	public interface Attempt {

		boolean run() throws Exception;

	}

	public static AtomicInteger hammer(int threads, int attemptsPerThread, Attempt attempt) throws Exception {
		ExecutorService pool = Executors.newFixedThreadPool(threads);
		CountDownLatch start = new CountDownLatch(1);
		AtomicInteger allowed = new AtomicInteger();
		List<Future<?>> futures = new ArrayList<>();
		for (int t = 0; t < threads; t++) {
			futures.add(pool.submit(() -> {
				start.await();
				for (int i = 0; i < attemptsPerThread; i++) {
					if (attempt.run()) {
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
		pool.shutdown();
		return allowed;
	}
}
