package io.github.ratelimit.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Admission with a receipt and exact give-back ({@link RateLimitStore#admitAll}, {@link RateLimitStore#giveBack}):
 * a give-back returns only what the attempt still holds, never more than if it had never been admitted.
 */
class GiveBackTests {

	private final ManualClock clock = new ManualClock(Duration.ofDays(20_000).toNanos());

	private final CaffeineRateLimitStore store = new CaffeineRateLimitStore(1000, this.clock, Runnable::run);

	private static Limit limit(Algorithm algorithm, long limit, Duration period) {
		return Limit.builder().algorithm(algorithm).limit(limit).period(period).build();
	}

	private Receipt admit(Acquisition acquisition) {
		return this.store.admitAll(List.of(acquisition)).get(0);
	}

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
	void aGiveBackReturnsTheAttemptsCost(Algorithm algorithm) {
		Acquisition login = new Acquisition("login", limit(algorithm, 4, Duration.ofHours(1)), "alice", 1);
		List<Receipt> receipts = new ArrayList<>();
		for (int i = 0; i < 4; i++) {
			receipts.add(admit(login));
		}
		assertThat(receipts).allMatch((receipt) -> receipt.decision().isAllowed() && receipt.holdsCost());
		Receipt refused = admit(login);
		assertThat(refused.decision().isAllowed()).isFalse();
		assertThat(refused.holdsCost()).isFalse();
		assertThat(this.store.giveBack(refused)).isNull();
		Decision after = this.store.giveBack(receipts.get(1));
		assertThat(after.remaining()).isEqualTo(1);
		assertThat(admit(login).decision().isAllowed()).isTrue();
		assertThat(admit(login).decision().isAllowed()).isFalse();
	}

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
	void aGiveBackWithACostAboveOneReturnsItAll(Algorithm algorithm) {
		Limit five = limit(algorithm, 5, Duration.ofHours(1));
		Receipt heavy = admit(new Acquisition("login", five, "alice", 3));
		admit(new Acquisition("login", five, "alice", 2));
		assertThat(this.store.peek(new Acquisition("login", five, "alice", 1)).remaining()).isZero();
		assertThat(this.store.giveBack(heavy).remaining()).isEqualTo(3);
	}

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = { "FIXED_WINDOW", "SLIDING_WINDOW_COUNTER" })
	void anAttemptOfAWindowThatEndedHoldsNothing(Algorithm algorithm) {
		Limit two = limit(algorithm, 2, Duration.ofMinutes(1));
		Acquisition login = new Acquisition("login", two, "alice", 1);
		Receipt old = admit(login);
		// Into the window after the next: the old attempt weighs nothing any more.
		this.clock.advance(Duration.ofMinutes(2));
		admit(login);
		admit(login);
		assertThat(this.store.giveBack(old).remaining()).as("the new window is not credited").isZero();
		assertThat(admit(login).decision().isAllowed()).isFalse();
	}

	@Test
	void aSlidingWindowCounterGivesBackFromThePreviousWindowWhileItWeighs() {
		Limit four = limit(Algorithm.SLIDING_WINDOW_COUNTER, 4, Duration.ofMinutes(1));
		Acquisition login = new Acquisition("login", four, "alice", 1);
		long windowStart = Math.floorDiv(this.clock.nanos(), Duration.ofMinutes(1).toNanos())
				* Duration.ofMinutes(1).toNanos();
		this.clock.advanceNanos(windowStart + Duration.ofSeconds(50).toNanos() - this.clock.nanos());
		List<Receipt> receipts = new ArrayList<>();
		for (int i = 0; i < 4; i++) {
			receipts.add(admit(login));
		}
		// 10 s into the next window: the previous one weighs 5/6 of its 4.
		this.clock.advance(Duration.ofSeconds(20));
		assertThat(this.store.peek(login).remaining()).isZero();
		this.store.giveBack(receipts.get(0));
		this.store.giveBack(receipts.get(1));
		// 2 * 50 / 60 = 1.67 weighs now: 2 remaining.
		assertThat(this.store.peek(login).remaining()).isEqualTo(2);
	}

	@Test
	void aWindowCounterCallerWithAnOlderClockReadingGivesBackFromTheWindowItWasCountedIn() {
		Limit four = limit(Algorithm.SLIDING_WINDOW_COUNTER, 4, Duration.ofMinutes(1));
		long period = Duration.ofMinutes(1).toNanos();
		long start = 30_000_000L * period;
		LimiterState state = four.newState();
		state.tryAcquire(start + 1_000_000_000L, 1, 0);
		// Read the clock just before another thread rolled the window: counted in the current window.
		long stale = start - 1_000;
		Decision admitted = state.tryAcquire(stale, 1, 0);
		long mark = state.mark(stale, admitted);
		assertThat(mark).isEqualTo(start);
		state.giveBack(start + 2_000_000_000L, 1, mark, four);
		assertThat(state.peek(start + 2_000_000_000L).remaining()).isEqualTo(3);
	}

	@Test
	void aLogGivesBackTheAttemptsOwnEntryNotTheNewest() {
		Limit two = limit(Algorithm.SLIDING_WINDOW_LOG, 2, Duration.ofMinutes(1));
		Acquisition login = new Acquisition("login", two, "alice", 1);
		Receipt first = admit(login);
		this.clock.advance(Duration.ofSeconds(40));
		admit(login);
		this.store.giveBack(first);
		assertThat(this.store.giveBack(first).remaining()).as("given back once only").isEqualTo(1);
		// 30 s later the first entry would have aged out; the second, still in the log, holds its place.
		this.clock.advance(Duration.ofSeconds(30));
		assertThat(this.store.peek(login).remaining()).isEqualTo(1);
		this.clock.advance(Duration.ofSeconds(31));
		assertThat(this.store.peek(login).remaining()).isEqualTo(2);
	}

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = { "TOKEN_BUCKET", "LEAKY_BUCKET" })
	void aBucketGivesBackOnlyWhatRefillHasNotRestored(Algorithm algorithm) {
		// Two a minute: a token every 30 s.
		Limit two = limit(algorithm, 2, Duration.ofMinutes(1));
		Acquisition login = new Acquisition("login", two, "alice", 1);
		Receipt first = admit(login);
		this.clock.advance(Duration.ofSeconds(30));
		// The first attempt's token has come back by refill: it holds nothing.
		admit(login);
		admit(login);
		assertThat(this.store.giveBack(first).remaining()).as("never more generous than without it").isZero();
		assertThat(admit(login).decision().isAllowed()).isFalse();
		// Partly refilled: 10 s after it, an attempt still holds 20 s of its 30 s step.
		this.clock.advance(Duration.ofMinutes(1));
		Receipt partly = admit(login);
		Receipt second = admit(login);
		this.clock.advance(Duration.ofSeconds(10));
		this.store.giveBack(second);
		// Left: the first's step, 20 s of it: one token back in 20 s, none now.
		Decision now = this.store.peek(login);
		assertThat(now.remaining()).isEqualTo(1);
		assertThat(now.resetNanos()).isEqualTo(Duration.ofSeconds(20).toNanos());
		assertThat(partly.decision().isAllowed()).isTrue();
	}

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
	void aGiveBackAfterALimitChangeReturnsTheAttemptUnderTheNewLimitWithoutMovingTheStateBack(Algorithm algorithm) {
		Limit four = limit(algorithm, 4, Duration.ofHours(1));
		Limit eight = limit(algorithm, 8, Duration.ofHours(1));
		Receipt first = admit(new Acquisition("login", four, "alice", 1));
		admit(new Acquisition("login", four, "alice", 1));
		// The limit changes (a plan, or at run time): the state moves, what was spent stays spent.
		Acquisition underEight = new Acquisition("login", eight, "alice", 1);
		assertThat(this.store.peek(underEight).limit()).isEqualTo(4);
		assertThat(admit(underEight).decision().remaining()).isEqualTo(5);
		assertThat(this.store.giveBack(first).limit()).as("the state stays under the new limit").isEqualTo(8);
		assertThat(this.store.peek(underEight).remaining()).isEqualTo(6);
	}

	@Test
	void oneRejectionGivesBackTheOthersOfTheRequest() {
		Limit wide = limit(Algorithm.TOKEN_BUCKET, 10, Duration.ofHours(1));
		Limit narrow = limit(Algorithm.FIXED_WINDOW, 1, Duration.ofHours(1));
		Acquisition api = new Acquisition("api", wide, "alice", 1);
		Acquisition login = new Acquisition("login", narrow, "alice", 1);
		assertThat(this.store.admitAll(List.of(api, login))).allMatch((r) -> r.decision().isAllowed());
		List<Receipt> refused = this.store.admitAll(List.of(api, login));
		assertThat(refused.get(1).decision().isAllowed()).isFalse();
		assertThat(refused).noneMatch(Receipt::holdsCost);
		assertThat(this.store.peek(api).remaining()).as("all or nothing").isEqualTo(9);
	}

	/**
	 * 64 threads admit and give back on one key while the clock stands still, then across a window's end
	 * and a limit change: the count is exact after each phase.
	 */
	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
	void giveBacksRacingNewAttemptsKeepTheCountExact(Algorithm algorithm) throws Exception {
		Limit limit = limit(algorithm, 1000, Duration.ofHours(1));
		Acquisition attempt = new Acquisition("login", limit, "mallory", 1);
		List<Receipt> held = Collections.synchronizedList(new ArrayList<>());
		AtomicInteger admitted = new AtomicInteger();
		AtomicInteger givenBack = new AtomicInteger();
		race(() -> {
			for (int i = 0; i < 100; i++) {
				Receipt receipt = admit(attempt);
				if (receipt.decision().isAllowed()) {
					admitted.incrementAndGet();
					if (ThreadLocalRandom.current().nextBoolean()) {
						assertThat(this.store.giveBack(receipt)).isNotNull();
						givenBack.incrementAndGet();
					}
					else {
						held.add(receipt);
					}
				}
			}
		});
		assertThat(admitted.get()).as("64 * 100 attempts on a budget of 1000").isEqualTo(1000 + givenBack.get());
		assertThat(this.store.peek(attempt).remaining()).isZero();
		assertThat(held).hasSize(1000);
		if (algorithm == Algorithm.FIXED_WINDOW || algorithm == Algorithm.SLIDING_WINDOW_COUNTER) {
			// Past the window after next: attempts of the old window hold nothing, and credit nothing new.
			this.clock.advance(Duration.ofHours(2));
			AtomicInteger fresh = new AtomicInteger();
			List<Receipt> old = new ArrayList<>(held);
			AtomicInteger next = new AtomicInteger();
			race(() -> {
				for (int i = 0; i < 30; i++) {
					int index = next.getAndIncrement();
					if (index < old.size()) {
						this.store.giveBack(old.get(index));
					}
					if (admit(attempt).decision().isAllowed()) {
						fresh.incrementAndGet();
					}
				}
			});
			assertThat(fresh.get()).isEqualTo(1000);
		}
		else {
			// A limit change between admission and give-back: each held attempt comes back once, under the new limit.
			Acquisition doubled = new Acquisition("login", limit(algorithm, 2000, Duration.ofHours(1)), "mallory", 1);
			List<Receipt> old = new ArrayList<>(held);
			AtomicInteger next = new AtomicInteger();
			AtomicInteger fresh = new AtomicInteger();
			race(() -> {
				for (int i = 0; i < 40; i++) {
					int index = next.getAndIncrement();
					if (index < old.size()) {
						this.store.giveBack(old.get(index));
					}
					if (admit(doubled).decision().isAllowed()) {
						fresh.incrementAndGet();
					}
				}
			});
			// 1000 held, moved to 2000 (still 1000 spent), all 1000 given back: 2000 for the new attempts.
			assertThat(fresh.get()).isEqualTo(2000);
			assertThat(this.store.peek(doubled).remaining()).isZero();
		}
	}

	private static void race(ThrowingRunnable body) throws Exception {
		ExecutorService pool = Executors.newFixedThreadPool(64);
		try {
			CountDownLatch start = new CountDownLatch(1);
			List<Future<?>> done = new ArrayList<>();
			for (int t = 0; t < 64; t++) {
				done.add(pool.submit(() -> {
					start.await();
					body.run();
					return null;
				}));
			}
			start.countDown();
			for (Future<?> future : done) {
				future.get();
			}
		}
		finally {
			pool.shutdownNow();
		}
	}

	@FunctionalInterface
	private interface ThrowingRunnable {

		void run() throws Exception;

	}

}
