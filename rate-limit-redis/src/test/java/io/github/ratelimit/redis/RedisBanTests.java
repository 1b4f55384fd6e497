package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.Ban;
import io.github.ratelimit.core.Limit;
import io.github.ratelimit.core.Receipt;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Bans on a real Redis, on the test's clock, decided in the budget's own script call: what the
 * in-process store's {@code BanTests} show, the same way; the ban's key sits in its state's slot, a reset
 * deletes both, and a request whose other budget refuses it counts nothing.
 */
class RedisBanTests {

	@RegisterExtension
	static final RedisExtension redis = new RedisExtension();

	private static final long HOUR_MICROS = Duration.ofHours(1).toNanos() / 1000;

	private final AtomicLong nowMicros = new AtomicLong(1_700_000_000_000_000L);

	private final Ban ban = new Ban(3, Duration.ofHours(1).toNanos(), Duration.ofHours(24).toNanos());

	private RedisRateLimitStore store;

	@BeforeEach
	void createStore() {
		redis.commands().flushall();
		this.store = RedisRateLimitStore.builder(redis.connectionFactory()).timeout(Duration.ofSeconds(2))
			.clock(this.nowMicros::get).build();
	}

	@AfterEach
	void closeStore() {
		this.store.close();
	}

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
	void theThirdRejectionBansTheKeyForADayUnderEveryAlgorithm(Algorithm algorithm) {
		Acquisition alice = acquisition(algorithm, "alice");
		assertThat(places(alice, 4)).containsOnly(Receipt.Place.STORE);
		Receipt third = admit(alice);
		assertThat(third.place()).isEqualTo(Receipt.Place.BANNED);
		assertThat(third.mark()).isEqualTo(Receipt.BAN_STARTED);
		assertThat(third.decision().retryAfterNanos()).isEqualTo(Duration.ofHours(24).toNanos());
		assertThat(redis.commands().exists("rate-limit:{login:alice}:ban")).as("the ban's key, in the state's slot")
			.isEqualTo(1);
		this.nowMicros.addAndGet(23 * HOUR_MICROS);
		Receipt banned = admit(alice);
		assertThat(banned.place()).isEqualTo(Receipt.Place.BANNED);
		assertThat(banned.mark()).isEqualTo(Receipt.NO_MARK);
		assertThat(banned.decision().retryAfterNanos()).isEqualTo(Duration.ofHours(1).toNanos());
		assertThat(this.store.bannedNanos(alice)).isEqualTo(Duration.ofHours(1).toNanos());
		assertThat(admit(acquisition(algorithm, "bob")).decision().isAllowed()).isTrue();
		this.nowMicros.addAndGet(HOUR_MICROS);
		assertThat(this.store.bannedNanos(alice)).isZero();
		assertThat(admit(alice).decision().isAllowed()).isTrue();
	}

	@Test
	void aBannedKeysRequestsAskNoBudgetAndAResetLiftsTheBan() {
		Acquisition alice = acquisition(Algorithm.FIXED_WINDOW, "alice");
		places(alice, 5);
		for (int i = 0; i < 5; i++) {
			assertThat(admit(alice).place()).isEqualTo(Receipt.Place.BANNED);
		}
		assertThat(this.store.bannedNanos(alice)).as("not lengthened").isEqualTo(Duration.ofHours(24).toNanos());
		this.store.reset("login", "alice");
		assertThat(redis.commands().keys("*alice*")).isEmpty();
		assertThat(this.store.bannedNanos(alice)).isZero();
		assertThat(places(alice, 4)).as("whole, and the count starts again").containsOnly(Receipt.Place.STORE);
	}

	@Test
	void rejectionsCountWithinTheirWindowOnlyAndAnotherBudgetsRefusalCountsNothing() {
		Acquisition alice = acquisition(Algorithm.FIXED_WINDOW, "alice");
		places(alice, 4);
		this.nowMicros.addAndGet(HOUR_MICROS + 60_000_000L);
		assertThat(places(alice, 4)).containsOnly(Receipt.Place.STORE);
		Acquisition spent = new Acquisition("other", Limit.builder().limit(1).period(Duration.ofHours(1)).build(), "x", 1);
		this.store.admitAll(List.of(spent));
		for (int i = 0; i < 5; i++) {
			assertThat(this.store.admitAll(List.of(spent, alice)).get(1).place()).isNotEqualTo(Receipt.Place.BANNED);
		}
		assertThat(this.store.bannedNanos(alice)).isZero();
		assertThat(admit(alice).place()).isEqualTo(Receipt.Place.BANNED);
	}

	@Test
	void aRequestThatMayBanAndTakesASlotHoldsItsLease() {
		// Each request has acquisitions of its own: a lease is the request's.
		Limit one = Limit.builder().algorithm(Algorithm.CONCURRENCY).limit(1).build();
		Acquisition alicesSlot = new Acquisition("slots", one, "global", 1);
		List<Receipt> first = this.store.admitAll(List.of(acquisition(Algorithm.TOKEN_BUCKET, "alice"), alicesSlot));
		assertThat(first).allMatch((receipt) -> receipt.decision().isAllowed());
		assertThat(this.store.admitAll(List.of(acquisition(Algorithm.TOKEN_BUCKET, "bob"),
				new Acquisition("slots", one, "global", 1))).get(1).decision().isAllowed()).as("the one slot is held")
			.isFalse();
		this.store.release(alicesSlot);
		assertThat(this.store.admitAll(List.of(acquisition(Algorithm.TOKEN_BUCKET, "carl"),
				new Acquisition("slots", one, "global", 1))).get(1).decision().isAllowed()).as("and given back").isTrue();
	}

	@Test
	void aResetOfEveryBudgetLiftsEveryBan() {
		Acquisition alice = acquisition(Algorithm.TOKEN_BUCKET, "alice");
		places(alice, 5);
		this.store.resetAll();
		assertThat(this.store.bannedNanos(alice)).isZero();
	}

	private List<Receipt.Place> places(Acquisition acquisition, int times) {
		return IntStream.range(0, times).mapToObj((i) -> admit(acquisition).place()).toList();
	}

	private Receipt admit(Acquisition acquisition) {
		return this.store.admitAll(List.of(acquisition)).get(0);
	}

	private Acquisition acquisition(Algorithm algorithm, String key) {
		Limit limit = Limit.builder().algorithm(algorithm).limit(2).period(Duration.ofMinutes(1)).build();
		return new Acquisition("login", limit, key, 1, 0, this.ban);
	}

}
