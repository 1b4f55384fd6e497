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


import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Concurrency limits in the Caffeine store: an exact count of requests in flight per key, forgotten
 * when the last one ends, bounded by the table size, carried over when the key's limit changes.
 */
class ConcurrencyTableTests {

	private static final Limit THREE = Limit.builder().algorithm(Algorithm.CONCURRENCY).limit(3).build();

	private final ManualClock clock = new ManualClock();

	@Test
	void sixtyFourThreadsGetExactlyTheLimitWhileTheyHoldTheirSlots() throws Exception {
		CaffeineRateLimitStore store = new CaffeineRateLimitStore(1000, this.clock);
		ExecutorService threads = Executors.newFixedThreadPool(64);
		try {
			for (int round = 0; round < 20; round++) {
				CountDownLatch start = new CountDownLatch(1);
				List<Future<Acquisition>> results = new ArrayList<>();
				for (int i = 0; i < 64; i++) {
					results.add(threads.submit(() -> {
						start.await();
						Acquisition acquisition = new Acquisition("slots", THREE, "k", 1);
						return store.tryAcquire(acquisition).isAllowed() ? acquisition : null;
					}));
				}
				start.countDown();
				List<Acquisition> admitted = new ArrayList<>();
				for (Future<Acquisition> result : results) {
					Acquisition acquisition = result.get(10, TimeUnit.SECONDS);
					if (acquisition != null) {
						admitted.add(acquisition);
					}
				}
				assertThat(admitted).as("round %d", round).hasSize(3);
				admitted.forEach(store::release);
				assertThat(store.size("slots")).as("nothing in flight, nothing kept").isZero();
			}
			AtomicInteger inFlight = new AtomicInteger();
			AtomicInteger most = new AtomicInteger();
			List<Future<?>> loops = new ArrayList<>();
			for (int i = 0; i < 64; i++) {
				loops.add(threads.submit(() -> {
					for (int n = 0; n < 500; n++) {
						Acquisition acquisition = new Acquisition("slots", THREE, "k", 1);
						if (store.tryAcquire(acquisition).isAllowed()) {
							most.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
							inFlight.decrementAndGet();
							store.release(acquisition);
						}
					}
					return null;
				}));
			}
			for (Future<?> loop : loops) {
				loop.get(30, TimeUnit.SECONDS);
			}
			assertThat(most.get()).isBetween(1, 3);
			assertThat(store.peek(new Acquisition("slots", THREE, "k", 1)).remaining()).isEqualTo(3);
		}
		finally {
			threads.shutdownNow();
		}
	}

	@Test
	void decisionsTellTheFreeSlotsAndARejectionRetriesAfterASecond() {
		CaffeineRateLimitStore store = new CaffeineRateLimitStore(1000, this.clock);
		Decision first = store.tryAcquire(new Acquisition("slots", THREE, "k", 2));
		assertThat(first.remaining()).isEqualTo(1);
		Decision rejected = store.tryAcquire(new Acquisition("slots", THREE, "k", 2));
		assertThat(rejected.isAllowed()).isFalse();
		assertThat(rejected.remaining()).isEqualTo(1);
		assertThat(rejected.retryAfterNanos()).isEqualTo(Duration.ofSeconds(1).toNanos());
		this.clock.advance(Duration.ofDays(365));
		assertThat(store.tryAcquire(new Acquisition("slots", THREE, "k", 2)).isAllowed()).as("time frees nothing").isFalse();
		assertThat(store.size("slots")).isEqualTo(1);
	}

	@Test
	void aFullTableJudgesNewKeysByOverflowCountersAndForgetsNothingInFlight() {
		CaffeineRateLimitStore store = new CaffeineRateLimitStore(2, this.clock);
		Limit one = Limit.builder().algorithm(Algorithm.CONCURRENCY).limit(1).build();
		List<Acquisition> held = new ArrayList<>();
		for (int i = 0; i < 2000; i++) {
			Acquisition acquisition = new Acquisition("slots", one, "flood-" + i, 1);
			if (store.tryAcquire(acquisition).isAllowed()) {
				held.add(acquisition);
			}
		}
		assertThat(store.size("slots")).isEqualTo(2);
		assertThat(held.size()).as("two tracked, at most one per overflow counter").isLessThanOrEqualTo(2 + 256);
		// A tracked key keeps its slot, however many keys came.
		assertThat(store.tryAcquire(new Acquisition("slots", one, "flood-0", 1)).isAllowed()).isFalse();
		held.forEach(store::release);
		assertThat(store.size("slots")).isZero();
		for (int i = 0; i < 2000; i += 7) {
			assertThat(store.peek(new Acquisition("slots", one, "flood-" + i, 1)).remaining()).isEqualTo(1);
		}
	}

	@Test
	void theEndOfARequestAResetForgotFreesNoSlotTakenSince() {
		CaffeineRateLimitStore store = new CaffeineRateLimitStore(1000, this.clock);
		Limit four = Limit.builder().algorithm(Algorithm.CONCURRENCY).limit(4).build();
		Acquisition old1 = new Acquisition("slots", four, "k", 1);
		Acquisition old3 = new Acquisition("slots", four, "k", 3);
		assertThat(store.tryAcquire(old1).isAllowed()).isTrue();
		assertThat(store.tryAcquire(old3).isAllowed()).isTrue();
		store.reset("slots", "k");
		// The reset gives the key its four slots...
		Acquisition new2 = new Acquisition("slots", four, "k", 2);
		Acquisition new1 = new Acquisition("slots", four, "k", 1);
		assertThat(store.tryAcquire(new2).isAllowed()).isTrue();
		assertThat(store.tryAcquire(new1).isAllowed()).isTrue();
		// ...and the forgotten requests' ends free none of those taken since: 3 held of 4.
		assertThat(store.release(old1).remaining()).isEqualTo(1);
		assertThat(store.release(old3).remaining()).isEqualTo(1);
		assertThat(store.tryAcquire(new Acquisition("slots", four, "k", 2)).isAllowed()).isFalse();
		// The requests admitted since free their own slots, and the key is forgotten when empty.
		assertThat(store.release(new2).remaining()).isEqualTo(3);
		assertThat(store.release(new1).remaining()).isEqualTo(4);
		assertThat(store.size("slots")).isZero();
		assertThat(store.tryAcquire(new Acquisition("slots", four, "k", 4)).isAllowed()).isTrue();
	}

	@Test
	void afterAResetReleasesAreExactWhateverTheirOrder() {
		CaffeineRateLimitStore store = new CaffeineRateLimitStore(1000, this.clock);
		Limit two = Limit.builder().algorithm(Algorithm.CONCURRENCY).limit(2).build();
		Acquisition a1 = new Acquisition("slots", two, "k", 1);
		Acquisition a2 = new Acquisition("slots", two, "k", 1);
		store.tryAcquire(a1);
		store.tryAcquire(a2);
		store.reset("slots", "k");
		Acquisition b1 = new Acquisition("slots", two, "k", 1);
		Acquisition b2 = new Acquisition("slots", two, "k", 1);
		store.tryAcquire(b1);
		store.tryAcquire(b2);
		// A request admitted after the reset ends first: its slot is free at once...
		assertThat(store.release(b1).remaining()).isEqualTo(1);
		Acquisition c = new Acquisition("slots", two, "k", 1);
		assertThat(store.tryAcquire(c).isAllowed()).isTrue();
		// ...and the forgotten requests' ends free nothing: b2 and c hold both slots.
		store.release(a1);
		store.release(a2);
		assertThat(store.tryAcquire(new Acquisition("slots", two, "k", 1)).isAllowed()).isFalse();
		store.release(b2);
		store.release(c);
		assertThat(store.size("slots")).isZero();
	}

	@Test
	void aResetFreesTheSlotOfARequestThatNeverEnds() {
		CaffeineRateLimitStore store = new CaffeineRateLimitStore(1000, this.clock);
		Limit one = Limit.builder().algorithm(Algorithm.CONCURRENCY).limit(1).build();
		assertThat(store.tryAcquire(new Acquisition("slots", one, "k", 1)).isAllowed()).isTrue();
		store.reset("slots", "k");
		// The stuck request is forgotten for good: request after request gets the slot.
		for (int i = 0; i < 3; i++) {
			Acquisition next = new Acquisition("slots", one, "k", 1);
			assertThat(store.tryAcquire(next).isAllowed()).as("request %d", i).isTrue();
			store.release(next);
		}
		assertThat(store.size("slots")).isZero();
	}

	@Test
	void aResetThenALimitChangeKeepTheCountExact() {
		CaffeineRateLimitStore store = new CaffeineRateLimitStore(1000, this.clock);
		Limit two = Limit.builder().algorithm(Algorithm.CONCURRENCY).limit(2).build();
		Limit five = Limit.builder().algorithm(Algorithm.CONCURRENCY).limit(5).build();
		Limit one = Limit.builder().algorithm(Algorithm.CONCURRENCY).limit(1).build();
		Acquisition a = new Acquisition("slots", two, "k", 1);
		Acquisition a2 = new Acquisition("slots", two, "k", 1);
		store.tryAcquire(a);
		store.tryAcquire(a2);
		store.reset("slots", "k");
		// Raised, then a forgotten request ends under its old limit: nothing freed, nothing lost.
		Acquisition b = new Acquisition("slots", five, "k", 1);
		assertThat(store.tryAcquire(b).remaining()).isEqualTo(4);
		assertThat(store.release(a).remaining()).isEqualTo(4);
		assertThat(store.release(b).remaining()).isEqualTo(5);
		assertThat(store.size("slots")).isZero();
		// Lowered below what runs (held above the limit), then reset: the old requests' ends free nothing.
		List<Acquisition> running = new ArrayList<>();
		for (int i = 0; i < 5; i++) {
			Acquisition acquisition = new Acquisition("slots", five, "k", 1);
			store.tryAcquire(acquisition);
			running.add(acquisition);
		}
		assertThat(store.tryAcquire(new Acquisition("slots", one, "k", 1)).isAllowed()).isFalse();
		store.reset("slots", "k");
		Acquisition after = new Acquisition("slots", one, "k", 1);
		assertThat(store.tryAcquire(after).isAllowed()).isTrue();
		running.forEach(store::release);
		store.release(a2);
		assertThat(store.tryAcquire(new Acquisition("slots", one, "k", 1)).isAllowed()).as("after still runs").isFalse();
		store.release(after);
		assertThat(store.tryAcquire(new Acquisition("slots", one, "k", 1)).isAllowed()).isTrue();
	}

	@Test
	void slotsHeldCarryOverWhenTheKeysLimitChanges() {
		CaffeineRateLimitStore store = new CaffeineRateLimitStore(1000, this.clock);
		Limit two = Limit.builder().algorithm(Algorithm.CONCURRENCY).limit(2).build();
		Limit four = Limit.builder().algorithm(Algorithm.CONCURRENCY).limit(4).build();
		Acquisition a = new Acquisition("slots", two, "k", 1);
		store.tryAcquire(a);
		store.tryAcquire(new Acquisition("slots", two, "k", 1));
		assertThat(store.tryAcquire(new Acquisition("slots", two, "k", 1)).isAllowed()).isFalse();
		assertThat(store.tryAcquire(new Acquisition("slots", four, "k", 1)).remaining()).isEqualTo(1);
		assertThat(store.tryAcquire(new Acquisition("slots", four, "k", 1)).remaining()).isZero();
		assertThat(store.tryAcquire(new Acquisition("slots", two, "k", 1)).isAllowed()).isFalse();
		assertThat(store.release(a).remaining()).as("4 held under the limit of 2").isZero();
	}

	@Test
	void aConcurrencyLimitHasNoPeriodNorBurst() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> Limit.builder().algorithm(Algorithm.CONCURRENCY).limit(2).period(Duration.ofMinutes(1)).build())
			.withMessageContaining("period does not apply to concurrency");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> Limit.builder().algorithm(Algorithm.CONCURRENCY).limit(2).burst(3).build())
			.withMessageContaining("burst does not apply");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> Limit.builder().algorithm(Algorithm.CONCURRENCY).limit(10_001).build())
			.withMessageContaining("10000");
	}
}
