package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.Ban;
import io.github.ratelimit.core.CaffeineRateLimitStore;
import io.github.ratelimit.core.Limit;
import io.github.ratelimit.core.OnFailure;
import io.github.ratelimit.core.Receipt;
import io.github.ratelimit.test.ManualClock;
import io.github.ratelimit.testsupport.RedisProcess;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code on-failure} per limit, on a real Redis that the tests kill: each limit falls back its own way
 * (a login lockout {@code local}, an API quota {@code allow}, a paid upstream {@code deny}), all or nothing
 * per request; receipts say where each cost was taken; and a {@code local} limit never hands out its
 * budget twice when the store flaps between Redis and the local store.
 */
class PolicyOnFailureTests {

	@RegisterExtension
	static final RedisExtension redis = new RedisExtension();

	private static final Limit TWO = Limit.builder().limit(2).period(Duration.ofHours(1)).build();

	private static final Acquisition API = new Acquisition("api", TWO, "k", 1);

	private static final Acquisition LOGIN = new Acquisition("login", TWO, "alice", 1);

	private static final Acquisition UPSTREAM = new Acquisition("upstream", TWO, "k", 1);

	private LettuceConnectionFactory factory;

	private final List<RedisRateLimitStore> stores = new ArrayList<>();

	private final CaffeineRateLimitStore local = new CaffeineRateLimitStore(1000, new ManualClock());

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

	private RedisRateLimitStore store() {
		RedisRateLimitStore store = RedisRateLimitStore.builder(this.factory)
			.timeout(Duration.ofMillis(200))
			.onFailure(OnFailure.ALLOW)
			.onFailure("login", OnFailure.LOCAL)
			.onFailure("upstream", OnFailure.DENY)
			.localStore(this.local)
			.breaker(3, Duration.ofMillis(100))
			.build();
		this.stores.add(store);
		// Until a first call has reached Redis in time, on-failure would decide what the tests count.
		long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
		for (int i = 0; System.nanoTime() < deadline; i++) {
			Receipt warm = admit(store, new Acquisition("warm-up", TWO, "w" + i, 1));
			if (warm.place() == Receipt.Place.STORE) {
				break;
			}
			RedisProcess.sleep(50);
		}
		return store;
	}

	private static Receipt admit(RedisRateLimitStore store, Acquisition acquisition) {
		return store.admitAll(List.of(acquisition)).get(0);
	}

	@Test
	void aBanLivesInRedisOnlyAndAnOutageLeavesNoneBehindInTheLocalStore() {
		RedisRateLimitStore store = store();
		Acquisition banning = new Acquisition("login", TWO, "mallory", 1, 0,
				new Ban(2, Duration.ofHours(1).toNanos(), Duration.ofHours(1).toNanos()));
		redis.process().kill();
		List<Receipt.Place> places = new ArrayList<>();
		for (int i = 0; i < 6; i++) {
			places.add(admit(store, banning).place());
		}
		assertThat(places).as("judged by this instance's budget, never banned here")
			.containsExactly(Receipt.Place.LOCAL, Receipt.Place.LOCAL, Receipt.Place.LOCAL, Receipt.Place.LOCAL,
					Receipt.Place.LOCAL, Receipt.Place.LOCAL);
		assertThat(this.local.bannedNanos(banning)).isZero();
		redis.process().start();
		long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
		for (int i = 0; System.nanoTime() < deadline; i++) {
			if (admit(store, new Acquisition("warm-up", TWO, "back" + i, 1)).place() == Receipt.Place.STORE) {
				break;
			}
			RedisProcess.sleep(50);
		}
		Receipt back = admit(store, banning);
		assertThat(back.decision().retryAfterNanos()).as("this instance's lockout at most, no ban of its own")
			.isLessThan(Duration.ofHours(1).toNanos());
	}

	@Test
	void eachLimitFallsBackItsOwnWay() {
		RedisRateLimitStore store = store();
		redis.process().kill();
		for (int i = 0; i < 5; i++) {
			Receipt api = admit(store, API);
			assertThat(api.decision().isAllowed()).as("the API fails open").isTrue();
			assertThat(api.place()).isEqualTo(Receipt.Place.NOWHERE);
			Receipt upstream = admit(store, UPSTREAM);
			assertThat(upstream.decision().isAllowed()).as("the upstream fails closed").isFalse();
			assertThat(upstream.place()).isEqualTo(Receipt.Place.NOWHERE);
		}
		Receipt first = admit(store, LOGIN);
		assertThat(first.decision().isAllowed()).isTrue();
		assertThat(first.place()).isEqualTo(Receipt.Place.LOCAL);
		assertThat(admit(store, LOGIN).decision().isAllowed()).isTrue();
		Receipt locked = admit(store, LOGIN);
		assertThat(locked.decision().isAllowed()).as("the lockout holds on this instance's budget").isFalse();
		assertThat(locked.place()).isEqualTo(Receipt.Place.LOCAL);
		// A give-back goes where the cost was taken: the local store.
		store.giveBack(first);
		assertThat(admit(store, LOGIN).decision().isAllowed()).isTrue();
	}

	@Test
	void aRequestWithSeveralLimitsTakesEachOnesChoiceAllOrNothing() {
		RedisRateLimitStore store = store();
		redis.process().kill();
		List<Receipt> allowed = store.admitAll(List.of(API, LOGIN));
		assertThat(allowed).allMatch((receipt) -> receipt.decision().isAllowed());
		assertThat(allowed).extracting(Receipt::place).containsExactly(Receipt.Place.NOWHERE, Receipt.Place.LOCAL);
		List<Receipt> refused = store.admitAll(List.of(LOGIN, UPSTREAM));
		assertThat(refused.get(1).decision().isAllowed()).isFalse();
		assertThat(refused).noneMatch(Receipt::holdsCost);
		assertThat(this.local.peek(LOGIN).remaining()).as("the refused request took nothing locally").isEqualTo(1);
	}

	@Test
	void whatRedisAdmittedForALocalLimitIsHeldLocallyWhenRedisGoesAway() {
		RedisRateLimitStore store = store();
		Receipt first = admit(store, LOGIN);
		admit(store, LOGIN);
		assertThat(first.place()).isEqualTo(Receipt.Place.STORE);
		assertThat(first.mirror()).as("taken locally too").isNotNull();
		redis.process().kill();
		assertThat(admit(store, LOGIN).decision().isAllowed())
			.as("no second budget: the local store holds what Redis admitted").isFalse();
		// Given back: from Redis when it can (it cannot now: the attempt stays charged there), and locally.
		store.giveBack(first);
		assertThat(admit(store, LOGIN).decision().isAllowed()).isTrue();
	}

	@Test
	void whatTheLocalStoreAdmittedWhileRedisWasAwayIsNotHandedOutAgainByRedis() {
		RedisRateLimitStore store = store();
		redis.process().kill();
		assertThat(admit(store, LOGIN).place()).isEqualTo(Receipt.Place.LOCAL);
		assertThat(admit(store, LOGIN).place()).isEqualTo(Receipt.Place.LOCAL);
		redis.process().start();
		long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
		Receipt back = admit(store, API);
		while (back.place() != Receipt.Place.STORE && System.nanoTime() < deadline) {
			RedisProcess.sleep(50);
			back = admit(store, API);
		}
		assertThat(back.place()).as("Redis answers again").isEqualTo(Receipt.Place.STORE);
		Receipt login = admit(store, LOGIN);
		assertThat(login.decision().isAllowed()).as("Redis is fresh, but this instance spent the budget").isFalse();
		assertThat(login.place()).isEqualTo(Receipt.Place.LOCAL);
	}

	@Test
	void withRedisAnsweringAFloodThatFillsTheLocalTableRefusesNobody() {
		CaffeineRateLimitStore small = new CaffeineRateLimitStore(10, new ManualClock());
		RedisRateLimitStore store = RedisRateLimitStore.builder(this.factory)
			.timeout(Duration.ofSeconds(2))
			.onFailure(OnFailure.ALLOW)
			.onFailure("login", OnFailure.LOCAL)
			.localStore(small)
			.build();
		this.stores.add(store);
		// 10 keys fill the local table; the other 990 share its 256 overflow budgets of 2 each.
		for (int i = 0; i < 1000; i++) {
			Receipt receipt = admit(store, new Acquisition("login", TWO, "junk-" + i, 1));
			assertThat(receipt.decision().isAllowed()).as("junk-%d, by Redis", i).isTrue();
			assertThat(receipt.place()).isEqualTo(Receipt.Place.STORE);
		}
		assertThat(admit(store, LOGIN).decision().isAllowed()).as("a user arriving mid-flood").isTrue();
	}

	@Test
	void aResetForgetsTheKeyInTheLocalStoreOfAPolicyThatFallsBackToIt() {
		RedisRateLimitStore store = store();
		redis.process().kill();
		admit(store, LOGIN);
		admit(store, LOGIN);
		assertThat(admit(store, LOGIN).decision().isAllowed()).isFalse();
		redis.process().start();
		store.reset("login", "alice");
		assertThat(this.local.peek(LOGIN).remaining()).isEqualTo(2);
	}

}
