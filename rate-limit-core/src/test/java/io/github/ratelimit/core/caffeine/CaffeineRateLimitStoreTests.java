package io.github.ratelimit.core.caffeine;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.Decision;
import io.github.ratelimit.core.Limit;
import io.github.ratelimit.core.ManualClock;

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
	void aFloodOfDistinctKeysStaysWithinTheMaximumSize() {
		for (int i = 0; i < 10_000; i++) {
			this.store.tryAcquire(new Acquisition("api", this.limit, "client-" + i, 1));
		}
		this.store.cleanUp();
		assertThat(this.store.size()).isLessThanOrEqualTo(100);
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
		var expiry = new CaffeineRateLimitStore.IdleUntilFresh();
		var key = new CaffeineRateLimitStore.StoreKey("api", "alice");
		var state = this.limit.newState();
		long idle = this.limit.idleNanosUntilFresh() + 1_000_000_000L;
		assertThat(expiry.expireAfterRead(key, state, 0, idle + 5)).isEqualTo(idle + 5);
		assertThat(expiry.expireAfterRead(key, state, 0, 3)).isEqualTo(idle);
		assertThat(expiry.expireAfterUpdate(key, state, 0, idle + 7)).isEqualTo(idle + 7);
	}

	private int drain(Acquisition acquisition) {
		int allowed = 0;
		while (this.store.tryAcquire(acquisition).isAllowed()) {
			allowed++;
		}
		return allowed;
	}
}
