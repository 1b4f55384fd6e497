package io.github.ratelimit.core;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class CaffeineRateLimitStoreTests {

	private final ManualClock clock = new ManualClock();

	private final CaffeineRateLimitStore store = new CaffeineRateLimitStore(100, this.clock, Runnable::run);

	private final Limit limit = Limit.builder().limit(3).period(Duration.ofSeconds(30)).build();

	@Test
	void keysAndLimitsHaveSeparateBudgets() {
		drain(new Acquisition("api", this.limit, "alice", 1));
		assertThat(this.store.tryAcquire(new Acquisition("api", this.limit, "bob", 1)).isAllowed()).isTrue();
		assertThat(this.store.tryAcquire(new Acquisition("login", this.limit, "alice", 1)).isAllowed()).isTrue();
		assertThat(this.store.tryAcquire(new Acquisition("api", this.limit, "alice", 1)).isAllowed()).isFalse();
	}

	@Test
	void anEntryExpiresOnlyOnceItsBucketIsFullAgain() {
		Acquisition alice = new Acquisition("api", this.limit, "alice", 1);
		drain(alice);
		// 25 s after the last touch, 2.5 tokens came back: the state must still be there.
		this.clock.advance(Duration.ofSeconds(25));
		this.store.cleanUp();
		assertThat(this.store.size()).isEqualTo(1);
		assertThat(this.store.peek(alice).remaining()).isEqualTo(2);
		// Once the bucket is full again (30 s) plus the slack, forgetting it changes nothing.
		this.clock.advance(Duration.ofSeconds(7));
		this.store.cleanUp();
		assertThat(this.store.size()).isZero();
		assertThat(drain(alice)).isEqualTo(3);
	}

	@Test
	void readingKeepsABusyKeyAlive() {
		Acquisition alice = new Acquisition("api", this.limit, "alice", 1);
		drain(alice);
		for (int i = 0; i < 10; i++) {
			this.clock.advance(Duration.ofSeconds(20));
			assertThat(this.store.tryAcquire(alice).isAllowed()).isTrue();
			this.store.cleanUp();
			assertThat(this.store.size()).isEqualTo(1);
		}
	}

	@Test
	void aKeyUsedAgainIsKeptUntilItsBucketIsFullAgain() {
		Acquisition alice = new Acquisition("api", this.limit, "alice", 1);
		drain(alice);
		// 20 s later two tokens came back; taking one makes the bucket full again only 40 s after the start.
		this.clock.advance(Duration.ofSeconds(20));
		assertThat(this.store.tryAcquire(alice).isAllowed()).isTrue();
		// 35 s after the start: past the first expiry (31 s), but a token is still missing.
		this.clock.advance(Duration.ofSeconds(15));
		this.store.cleanUp();
		assertThat(this.store.size()).as("kept").isEqualTo(1);
		assertThat(this.store.peek(alice).remaining()).isEqualTo(2);
	}

	@Test
	void aReservationAheadKeepsItsKeyUntilItHasRefilled() {
		// Delay mode: 3 at once, then 6 more reserved ahead (waits of 10 to 60 s), so the bucket is full
		// again only 90 s later, long after the limit's idle time (30 s) plus the slack.
		Acquisition queued = new Acquisition("api", this.limit, "alice", 1, Duration.ofSeconds(60).toNanos());
		for (int i = 0; i < 9; i++) {
			assertThat(this.store.tryAcquire(queued).isAllowed()).isTrue();
		}
		assertThat(this.store.tryAcquire(queued).isAllowed()).as("a 70 s wait exceeds the bound").isFalse();
		this.clock.advance(Duration.ofSeconds(35));
		this.store.cleanUp();
		assertThat(this.store.size()).as("kept while reservations are pending").isEqualTo(1);
		Acquisition now = new Acquisition("api", this.limit, "alice", 1);
		assertThat(this.store.tryAcquire(now).isAllowed()).as("55 s of reservations still ahead").isFalse();
		this.clock.advance(Duration.ofSeconds(60));
		this.store.cleanUp();
		assertThat(this.store.size()).as("forgotten once whole again").isZero();
	}

	@Test
	void limitsOfACenturyWithLongWaitsAreDecidedAndKept() {
		// Idle time plus wait beyond Caffeine's range of expiry (2^62 ns, about 146 years).
		Limit century = Limit.builder().limit(1).period(Duration.ofDays(365 * 100)).build();
		Acquisition queued = new Acquisition("api", century, "alice", 1, Duration.ofDays(365 * 120).toNanos());
		org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(Duration.ofSeconds(20), () -> {
			assertThat(this.store.tryAcquire(queued).waitNanos()).isZero();
			this.clock.advance(Duration.ofDays(1));
			assertThat(this.store.tryAcquire(queued).waitNanos()).isPositive();
			this.clock.advance(Duration.ofDays(365));
			assertThat(this.store.tryAcquire(queued).isAllowed()).isFalse();
		});
		this.store.cleanUp();
		assertThat(this.store.size()).isEqualTo(1);
	}

	@Test
	void decisionsOnAKnownKeyLeaveCaffeinesBookkeepingAlone() {
		java.util.concurrent.atomic.AtomicInteger maintenance = new java.util.concurrent.atomic.AtomicInteger();
		CaffeineRateLimitStore store = new CaffeineRateLimitStore(100, this.clock, (task) -> {
			maintenance.incrementAndGet();
			task.run();
		});
		Acquisition alice = new Acquisition("api", this.limit, "alice", 1);
		Acquisition bob = new Acquisition("api", this.limit, "bob", 1);
		store.tryAcquire(alice);
		store.tryAcquire(bob);
		store.cleanUp();
		maintenance.set(0);
		for (int i = 0; i < 10_000; i++) {
			store.tryAcquire(alice);
			store.check(bob);
			this.clock.advanceNanos(1_000);
		}
		assertThat(maintenance.get()).as("reads are quiet: no read buffer to drain").isZero();
		assertThat(store.peek(alice).remaining()).isZero();
	}

	@Test
	void aDecisionOnAKnownKeyReadsTheClockOnce() {
		java.util.concurrent.atomic.AtomicLong reads = new java.util.concurrent.atomic.AtomicLong();
		RateLimitClock counting = () -> {
			reads.incrementAndGet();
			return this.clock.nanos();
		};
		CaffeineRateLimitStore store = new CaffeineRateLimitStore(100, counting, Runnable::run);
		Acquisition alice = new Acquisition("api", this.limit, "alice", 1);
		store.tryAcquire(alice);
		reads.set(0);
		for (int i = 0; i < 100; i++) {
			store.tryAcquire(alice);
			store.check(alice);
		}
		assertThat(reads.get()).as("the entry's read time is the decision's").isEqualTo(200);
	}

	@Test
	void anEqualLimitOfAnotherObjectSpendsTheSameBudget() {
		// The quick path goes by the limit's identity; an equal limit built again (another policy
		// instance, a plan read twice) takes the full path and must still meet the same state.
		Limit again = Limit.builder().limit(3).period(Duration.ofSeconds(30)).build();
		assertThat(again).isEqualTo(this.limit).isNotSameAs(this.limit);
		Acquisition alice = new Acquisition("api", this.limit, "alice", 1);
		Acquisition aliceAgain = new Acquisition("api", again, "alice", 1);
		assertThat(this.store.tryAcquire(alice).remaining()).isEqualTo(2);
		assertThat(this.store.tryAcquire(aliceAgain).remaining()).isEqualTo(1);
		assertThat(this.store.tryAcquire(alice).remaining()).isZero();
		assertThat(this.store.tryAcquire(aliceAgain).isAllowed()).as("one budget of 3").isFalse();
		assertThat(this.store.tryAcquire(alice).isAllowed()).isFalse();
	}

	@Test
	void aReservationOnAKeyFirstSeenWithoutWaitsKeepsItUntilItHasRefilled() {
		// The entry was made for the limit's idle time alone (30 s plus the slack); a request that may
		// wait 60 s needs it kept for that long too, though it finds the entry on the quick path.
		Acquisition alice = new Acquisition("api", this.limit, "alice", 1);
		assertThat(drain(alice)).isEqualTo(3);
		Acquisition queued = new Acquisition("api", this.limit, "alice", 1, Duration.ofSeconds(60).toNanos());
		for (int i = 0; i < 6; i++) {
			assertThat(this.store.tryAcquire(queued).waitNanos()).isPositive();
		}
		// 35 s later: past the entry's first expiry, 25 s of reservations still ahead.
		this.clock.advance(Duration.ofSeconds(35));
		this.store.cleanUp();
		assertThat(this.store.size()).as("kept while reservations are pending").isEqualTo(1);
		assertThat(this.store.tryAcquire(alice).isAllowed()).isFalse();
		this.clock.advance(Duration.ofSeconds(60));
		this.store.cleanUp();
		assertThat(this.store.size()).as("forgotten once whole again").isZero();
	}

	@Test
	void aCheckKeepsNoKeyLongerThanItsStateNeeds() {
		Acquisition alice = new Acquisition("api", this.limit, "alice", 1);
		drain(alice);
		this.clock.advance(Duration.ofSeconds(25));
		assertThat(this.store.check(alice).isAllowed()).isTrue();
		this.clock.advance(Duration.ofSeconds(7));
		this.store.cleanUp();
		assertThat(this.store.size()).as("the check changed nothing, so the bucket is full again").isZero();
	}

	@Test
	void aFloodOfDistinctKeysStaysWithinTheMaximumSize() {
		for (int i = 0; i < 10_000; i++) {
			this.store.tryAcquire(new Acquisition("api", this.limit, "client-" + i, 1));
		}
		this.store.cleanUp();
		assertThat(this.store.size("api")).isEqualTo(100);
		assertThat(this.store.size()).isEqualTo(100);
		assertThat(this.store.overflowDecisions("api")).isEqualTo(10_000 - 100);
	}

	@Test
	void resetAllMakesEveryBudgetWholeTheOverflowBudgetsIncluded() {
		Acquisition alice = new Acquisition("login", this.limit, "alice", 1);
		Acquisition other = new Acquisition("api", this.limit, "alice", 1);
		drain(alice);
		drain(other);
		// A full table: a key it does not track is judged by an overflow budget, drained here.
		for (int i = 0; i < 100; i++) {
			this.store.tryAcquire(new Acquisition("login", this.limit, "flood-" + i, 1));
		}
		Acquisition untracked = new Acquisition("login", this.limit, "newcomer", 1);
		drain(untracked);
		assertThat(this.store.size("login")).isEqualTo(100);
		assertThat(this.store.overflowDecisions("login")).isPositive();
		assertThat(this.store.tryAcquire(untracked).isAllowed()).as("its overflow budget is spent").isFalse();

		this.store.resetAll();

		assertThat(this.store.size()).isZero();
		assertThat(this.store.overflowDecisions("login")).isZero();
		assertThat(drain(alice)).isEqualTo(3);
		assertThat(drain(other)).isEqualTo(3);
		assertThat(drain(untracked)).isEqualTo(3);
		assertThat(this.store.size("login")).as("tracked on its own again").isEqualTo(2);
	}

	@Test
	void resetAllFreesConcurrencySlotsToo() {
		Limit one = Limit.builder().algorithm(Algorithm.CONCURRENCY).limit(1).build();
		Acquisition slot = new Acquisition("uploads", one, "alice", 1);
		assertThat(this.store.tryAcquire(slot).isAllowed()).isTrue();
		assertThat(this.store.tryAcquire(slot).isAllowed()).as("its one slot is held").isFalse();

		this.store.resetAll();

		assertThat(this.store.tryAcquire(slot).isAllowed()).isTrue();
		assertThat(this.store.tryAcquire(slot).isAllowed()).isFalse();
	}

	@Test
	void aMillionKeyFloodStaysWithinTheBoundAndLiftsNoLockout() {
		CaffeineRateLimitStore store = new CaffeineRateLimitStore(100_000, this.clock, Runnable::run);
		Acquisition victim = new Acquisition("login", this.limit, "victim", 1);
		assertThat(drain(store, victim)).isEqualTo(3);
		for (int i = 0; i < 1_000_000; i++) {
			store.tryAcquire(new Acquisition("login", this.limit, "flood-" + i, 1));
			if (i % 100_000 == 0) {
				this.clock.advance(Duration.ofMillis(100));
			}
		}
		assertThat(store.size("login")).isEqualTo(100_000);
		assertThat(store.tryAcquire(victim).isAllowed()).as("still locked out").isFalse();
	}

	@Test
	void aFloodOnOneLimitNeverEvictsAnotherLimitsStateNorItsOwnLockouts() {
		Acquisition locked = new Acquisition("login", this.limit, "alice", 1);
		Acquisition elsewhere = new Acquisition("api", this.limit, "alice", 1);
		drain(locked);
		this.store.tryAcquire(elsewhere);
		for (int i = 0; i < 10 * 100; i++) {
			this.store.tryAcquire(new Acquisition("login", this.limit, "user-" + i, 1));
			this.store.tryAcquire(new Acquisition("api", this.limit, "header-" + i, 1));
			this.store.tryAcquire(new Acquisition("search", this.limit, "q-" + i, 1));
		}
		this.store.cleanUp();
		assertThat(this.store.tryAcquire(locked).isAllowed()).as("the lockout holds").isFalse();
		assertThat(this.store.peek(elsewhere).remaining()).as("the other limit's state is kept").isEqualTo(2);
		assertThat(this.store.size("login")).isEqualTo(100);
		assertThat(this.store.size("api")).isEqualTo(100);
		assertThat(this.store.size("search")).isEqualTo(100);
	}

	@Test
	void aNewVictimGetsNoFreshBudgetWhileTheTableIsFull() {
		// Reference: the victim's guesses over four minutes, one every second, on a store of its own.
		ManualClock aloneClock = new ManualClock();
		CaffeineRateLimitStore alone = new CaffeineRateLimitStore(100, aloneClock, Runnable::run);
		int reference = 0;
		for (int second = 0; second < 240; second++) {
			reference += alone.tryAcquire(new Acquisition("login", this.limit, "victim", 1)).isAllowed() ? 1 : 0;
			aloneClock.advance(Duration.ofSeconds(1));
		}
		// The same guesses while an attacker keeps the table full with fresh junk keys every second.
		int allowed = 0;
		int junk = 0;
		for (int second = 0; second < 240; second++) {
			for (int i = 0; i < 150; i++) {
				this.store.tryAcquire(new Acquisition("login", this.limit, "junk-" + junk++, 1));
			}
			allowed += this.store.tryAcquire(new Acquisition("login", this.limit, "victim", 1)).isAllowed() ? 1 : 0;
			this.clock.advance(Duration.ofSeconds(1));
			assertThat(this.store.size("login")).isLessThanOrEqualTo(100);
		}
		assertThat(reference).isEqualTo(3 + 237 / 10);
		assertThat(allowed).as("never more guesses than a tracked victim gets").isLessThanOrEqualTo(reference);
	}

	@Test
	void aFullTableMakesRoomByItselfOnceItsStatesAreFresh() {
		// The store as the auto-configuration builds it (Caffeine's maintenance on the common pool), and
		// nobody calls cleanUp(): only requests go on.
		CaffeineRateLimitStore store = new CaffeineRateLimitStore(100, this.clock);
		for (int i = 0; i < 150; i++) {
			store.tryAcquire(new Acquisition("login", this.limit, "flood-" + i, 1));
		}
		assertThat(store.size("login")).isEqualTo(100);
		// 30 s refill the flood's buckets, 1 s of slack: every state of the flood is fresh and may go.
		this.clock.advance(Duration.ofSeconds(32));
		Acquisition late = new Acquisition("login", this.limit, "late", 1);
		assertThat(drain(store, late)).isEqualTo(3);
		assertThat(store.size("login")).as("tracked on its own, in the room the flood left").isEqualTo(1);
		assertThat(store.overflowDecisions("login")).as("the flood's 50 only").isEqualTo(50);
	}

	@Test
	void resettingAKeyJudgedByItsOverflowBudgetMakesThatBudgetWhole() {
		for (int i = 0; i < 100; i++) {
			this.store.tryAcquire(new Acquisition("login", this.limit, "filler-" + i, 1));
		}
		Acquisition untracked = new Acquisition("login", this.limit, "newcomer", 1);
		assertThat(drain(untracked)).isEqualTo(3);
		assertThat(this.store.size("login")).as("judged by its overflow budget").isEqualTo(100);

		this.store.reset("login", "newcomer");

		assertThat(this.store.peek(untracked).remaining()).isEqualTo(3);
		assertThat(drain(untracked)).isEqualTo(3);
		assertThat(this.store.size("login")).isEqualTo(100);
	}

	@Test
	void resettingATrackedKeyOfAFullTableLeavesItNoSpentOverflowBudget() {
		Acquisition user = new Acquisition("login", this.limit, "gina", 1);
		this.store.tryAcquire(user);
		for (int i = 0; i < 5_000; i++) {
			// A flood fills the table and spends every overflow budget.
			this.store.tryAcquire(new Acquisition("login", this.limit, "junk-" + i, 1));
		}
		assertThat(this.store.peek(user).remaining()).isEqualTo(2);
		this.store.reset("login", "gina");
		assertThat(this.store.peek(user).remaining()).as("whole, as the operator asked").isEqualTo(3);
		assertThat(drain(user)).isEqualTo(3);
	}

	@Test
	void aKeyIsTrackedOnItsOwnOnlyOnceItsOverflowBudgetIsFresh() {
		for (int i = 0; i < 100; i++) {
			this.store.tryAcquire(new Acquisition("login", this.limit, "filler-" + i, 1));
		}
		this.clock.advance(Duration.ofSeconds(20));
		Acquisition late = new Acquisition("login", this.limit, "late", 1);
		assertThat(drain(late)).as("judged by its (so far unused) overflow budget").isEqualTo(3);
		// The fillers become fresh and leave 31 s after their use; the overflow budget was spent later,
		// so it is not fresh yet: the key stays with it although the table has room now.
		this.clock.advance(Duration.ofSeconds(12));
		this.store.cleanUp();
		assertThat(this.store.size("login")).isZero();
		assertThat(this.store.tryAcquire(late).isAllowed()).as("one token came back in 12 s").isTrue();
		assertThat(this.store.tryAcquire(late).isAllowed()).as("a fresh state would have allowed this").isFalse();
		assertThat(this.store.size("login")).isZero();
		// Once its overflow budget is whole again (30 s after its last token was taken), so is its own.
		this.clock.advance(Duration.ofSeconds(30));
		assertThat(drain(late)).isEqualTo(3);
		assertThat(this.store.size("login")).isEqualTo(1);
	}

	@Test
	void resetAndExpiryFreeTheirPlaces() {
		for (int i = 0; i < 100; i++) {
			this.store.tryAcquire(new Acquisition("api", this.limit, "k-" + i, 1));
		}
		assertThat(this.store.size("api")).isEqualTo(100);
		this.store.reset("api", "k-0");
		this.store.reset("api", "k-0");
		this.store.reset("api", "never-seen");
		assertThat(this.store.size("api")).isEqualTo(99);
		this.clock.advance(Duration.ofSeconds(11));
		this.store.cleanUp();
		assertThat(this.store.size("api")).isEqualTo(99);
		this.clock.advance(Duration.ofSeconds(30));
		this.store.cleanUp();
		assertThat(this.store.size("api")).isZero();
	}

	@Test
	void sixteenThreadsFloodingAFullTableNeverOverspendATrackedKeyNorGrowIt() throws Exception {
		CaffeineRateLimitStore store = new CaffeineRateLimitStore(1_000, this.clock);
		Limit large = Limit.builder().limit(5_000).period(Duration.ofHours(1)).build();
		Acquisition tracked = new Acquisition("api", large, "tracked", 1);
		store.tryAcquire(tracked);
		java.util.concurrent.atomic.AtomicInteger junk = new java.util.concurrent.atomic.AtomicInteger();
		java.util.concurrent.atomic.AtomicInteger allowed = io.github.ratelimit.core.ConcurrencyTests.hammer(16,
				2_000, () -> {
					store.tryAcquire(new Acquisition("api", large, "junk-" + junk.incrementAndGet(), 1));
					return store.tryAcquire(tracked).isAllowed();
				});
		assertThat(allowed.get()).isEqualTo(5_000 - 1);
		assertThat(store.size("api")).isEqualTo(1_000);
	}

	@Test
	void tryAcquireAllConsumesNothingWhenOneLimitRejects() {
		Limit tight = Limit.builder().limit(1).period(Duration.ofMinutes(1)).build();
		Acquisition wide = new Acquisition("wide", this.limit, "alice", 1);
		Acquisition narrow = new Acquisition("narrow", tight, "alice", 1);
		List<Decision> first = this.store.tryAcquireAll(List.of(wide, narrow));
		assertThat(first).allMatch(Decision::isAllowed);
		assertThat(first.get(0).remaining()).isEqualTo(2);
		List<Decision> second = this.store.tryAcquireAll(List.of(wide, narrow));
		assertThat(second.get(0).isAllowed()).isTrue();
		assertThat(second.get(0).remaining()).as("given back").isEqualTo(2);
		assertThat(second.get(1).isAllowed()).isFalse();
		assertThat(this.store.peek(wide).remaining()).isEqualTo(2);
	}

	@Test
	void checkTakesNothingAndCreatesNoState() {
		Acquisition alice = new Acquisition("api", this.limit, "alice", 2);
		for (int i = 0; i < 5; i++) {
			Decision checked = this.store.check(alice);
			assertThat(checked.isAllowed()).isTrue();
			assertThat(checked.remaining()).as("nothing taken").isEqualTo(3);
		}
		this.store.cleanUp();
		assertThat(this.store.size()).as("a check of an unknown key stores nothing").isZero();
		this.store.tryAcquire(alice);
		Decision rejected = this.store.check(alice);
		assertThat(rejected.isAllowed()).isFalse();
		assertThat(rejected).isEqualTo(this.store.tryAcquire(alice));
		assertThat(this.store.peek(alice).remaining()).isEqualTo(1);
	}

	@Test
	void resetMakesTheBudgetWhole() {
		Acquisition alice = new Acquisition("api", this.limit, "alice", 1);
		drain(alice);
		this.store.reset("api", "alice");
		assertThat(drain(alice)).isEqualTo(3);
	}

	@Test
	void aReaderWithAStaleClockNeverShortensTheExpiry() {
		var expiry = new IdleUntilFresh();
		var key = "alice";
		var state = this.limit.newState();
		long idle = this.limit.idleNanosUntilFresh() + 1_000_000_000L;
		assertThat(expiry.expireAfterRead(key, state, 0, idle + 5)).isEqualTo(idle + 5);
		assertThat(expiry.expireAfterRead(key, state, 0, 3)).isEqualTo(idle);
		assertThat(expiry.expireAfterUpdate(key, state, 0, idle + 7)).isEqualTo(idle + 7);
	}

	private int drain(Acquisition acquisition) {
		return drain(this.store, acquisition);
	}

	private static int drain(CaffeineRateLimitStore store, Acquisition acquisition) {
		int allowed = 0;
		while (store.tryAcquire(acquisition).isAllowed()) {
			allowed++;
		}
		return allowed;
	}
}
