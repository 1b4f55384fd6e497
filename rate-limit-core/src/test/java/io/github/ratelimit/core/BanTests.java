package io.github.ratelimit.core;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Bans in the in-process store, on a manual clock: the {@code after}-th rejection of a key's budget within
 * {@code within} bans it for {@code duration}; a banned key is rejected without its budget being asked; a
 * reset lifts the ban; a flood of keys neither lifts a ban nor grows the table.
 */
class BanTests {

	private static final long HOUR = Duration.ofHours(1).toNanos();

	private final ManualClock clock = new ManualClock();

	private final CaffeineRateLimitStore store = new CaffeineRateLimitStore(1000, this.clock, Runnable::run);

	/** 2 a minute; banned for a day after 3 rejections within an hour. */
	private final Ban ban = new Ban(3, HOUR, 24 * HOUR);

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
	void theThirdRejectionBansTheKeyForADayUnderEveryAlgorithm(Algorithm algorithm) {
		Acquisition alice = acquisition(algorithm, "alice");
		assertThat(places(alice, 4)).containsExactly(Receipt.Place.STORE, Receipt.Place.STORE, Receipt.Place.STORE,
				Receipt.Place.STORE);
		Receipt third = admit(alice);
		assertThat(third.place()).isEqualTo(Receipt.Place.BANNED);
		assertThat(third.mark()).as("this rejection started the ban").isEqualTo(Receipt.BAN_STARTED);
		assertThat(third.decision().retryAfterNanos()).isEqualTo(24 * HOUR);
		this.clock.advance(Duration.ofHours(23));
		Receipt banned = admit(alice);
		assertThat(banned.place()).isEqualTo(Receipt.Place.BANNED);
		assertThat(banned.mark()).isEqualTo(Receipt.NO_MARK);
		assertThat(banned.decision().retryAfterNanos()).as("the rest of the ban").isEqualTo(HOUR);
		assertThat(banned.decision().nextNanos()).isEqualTo(HOUR);
		assertThat(this.store.bannedNanos(alice)).isEqualTo(HOUR);
		assertThat(admit(acquisition(algorithm, "bob")).decision().isAllowed()).as("another key").isTrue();
		this.clock.advance(Duration.ofHours(1));
		assertThat(this.store.bannedNanos(alice)).isZero();
		assertThat(admit(alice).decision().isAllowed()).as("the ban is over, the budget refilled").isTrue();
	}

	@Test
	void aBannedKeysRequestsAskNoBudgetAndCountNoFurther() {
		Acquisition alice = acquisition(Algorithm.FIXED_WINDOW, "alice");
		places(alice, 5);
		assertThat(this.store.bannedNanos(alice)).isEqualTo(24 * HOUR);
		for (int i = 0; i < 10; i++) {
			assertThat(admit(alice).place()).isEqualTo(Receipt.Place.BANNED);
		}
		assertThat(this.store.peek(alice).remaining()).as("nothing taken while banned").isZero();
		assertThat(this.store.bannedNanos(alice)).as("not lengthened").isEqualTo(24 * HOUR);
	}

	@Test
	void rejectionsCountWithinTheirWindowOnly() {
		Acquisition alice = acquisition(Algorithm.FIXED_WINDOW, "alice");
		places(alice, 4);
		this.clock.advance(Duration.ofMinutes(61));
		// A new minute's window: 2 allowed, then rejections that start a new count.
		assertThat(places(alice, 4)).containsOnly(Receipt.Place.STORE);
		assertThat(this.store.bannedNanos(alice)).isZero();
		assertThat(admit(alice).place()).isEqualTo(Receipt.Place.BANNED);
	}

	@Test
	void aResetLiftsTheBanAndMakesTheBudgetWhole() {
		Acquisition alice = acquisition(Algorithm.TOKEN_BUCKET, "alice");
		places(alice, 5);
		this.store.reset(alice.limitId(), alice.key());
		assertThat(this.store.bannedNanos(alice)).isZero();
		assertThat(admit(alice).decision().remaining()).isEqualTo(1);
		assertThat(places(alice, 3)).as("the count starts again").containsOnly(Receipt.Place.STORE);
	}

	@Test
	void anotherBudgetOfTheRequestRejectingCountsNothing() {
		Acquisition alice = acquisition(Algorithm.TOKEN_BUCKET, "alice");
		Acquisition spent = new Acquisition("other", Limit.builder().limit(1).period(Duration.ofHours(1)).build(), "x", 1);
		this.store.admitAll(List.of(spent));
		for (int i = 0; i < 10; i++) {
			List<Receipt> receipts = this.store.admitAll(List.of(alice, spent));
			assertThat(receipts.get(0).place()).isEqualTo(Receipt.Place.NOWHERE);
		}
		assertThat(this.store.bannedNanos(alice)).isZero();
	}

	@Test
	void aFloodOfKeysNeitherLiftsABanOrALockoutNorGrowsTheTables() {
		Acquisition banned = acquisition(Algorithm.TOKEN_BUCKET, "banned");
		Acquisition locked = acquisition(Algorithm.TOKEN_BUCKET, "locked");
		places(banned, 5);
		places(locked, 3);
		for (int i = 0; i < 20_000; i++) {
			// Each junk key runs into its limit until it is banned, the worst a flood can do.
			places(acquisition(Algorithm.TOKEN_BUCKET, "junk-" + i), 5);
		}
		assertThat(admit(banned).place()).as("still banned").isEqualTo(Receipt.Place.BANNED);
		assertThat(admit(locked).decision().isAllowed()).as("still locked out").isFalse();
		assertThat(this.store.size("login")).isLessThanOrEqualTo(1000);
		assertThat(this.store.banTableSize("login")).isLessThanOrEqualTo(1000);
	}

	@Test
	void aBanNeedsAtLeastOneRejectionAndPositiveDurations() {
		assertThatIllegalArgumentException().isThrownBy(() -> new Ban(0, HOUR, HOUR));
		assertThatIllegalArgumentException().isThrownBy(() -> new Ban(1, 0, HOUR));
		assertThatIllegalArgumentException().isThrownBy(() -> new Ban(1, HOUR, -1));
		Limit slots = Limit.builder().algorithm(Algorithm.CONCURRENCY).limit(2).build();
		assertThatIllegalArgumentException().isThrownBy(() -> new Acquisition("slots", slots, "k", 1, 0, this.ban));
	}

	private List<Receipt.Place> places(Acquisition acquisition, int times) {
		return java.util.stream.IntStream.range(0, times).mapToObj((i) -> admit(acquisition).place()).toList();
	}

	private Receipt admit(Acquisition acquisition) {
		return this.store.admitAll(List.of(acquisition)).get(0);
	}

	private Acquisition acquisition(Algorithm algorithm, String key) {
		Limit limit = Limit.builder().algorithm(algorithm).limit(2).period(Duration.ofMinutes(1)).build();
		return new Acquisition("login", limit, key, 1, 0, this.ban);
	}

}
