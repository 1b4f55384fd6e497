package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

import io.lettuce.core.cluster.SlotHash;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.Ban;
import io.github.ratelimit.core.CaffeineRateLimitStore;
import io.github.ratelimit.core.Limit;
import io.github.ratelimit.core.RateLimitClock;
import io.github.ratelimit.core.RateLimitStore;
import io.github.ratelimit.core.Receipt;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two policies that ban (a username's and an address's, as docs/operations.md recommends) decide a request
 * alike in process, on one Redis and on a Cluster, where their keys sit in different slots and each is one
 * call: only the first budget that refuses a request counts towards its ban; a budget after it is neither
 * banned nor counted.
 */
class BanAgreementTests {

	@RegisterExtension
	static final RedisExtension redis = new RedisExtension();

	private static final Limit ONE = Limit.builder().limit(1).period(Duration.ofHours(1)).build();

	private static final Ban BAN = new Ban(2, Duration.ofHours(1).toNanos(), Duration.ofHours(24).toNanos());

	@Test
	void onlyTheFirstBudgetThatRefusesARequestCountsTowardsItsBanOnEveryStore() {
		List<String> outcomes = onEveryStore(BanAgreementTests::bothSpent);
		assertThat(outcomes).containsOnly("STORE,BANNED user banned, ip not banned");
	}

	@Test
	void aBanOfALaterBudgetDoesNotAnswerARequestAnEarlierOneRefusedOnEveryStore() {
		List<String> outcomes = onEveryStore(BanAgreementTests::laterOneBanned);
		assertThat(outcomes).allSatisfy((outcome) -> assertThat(outcome).isEqualTo("user refused, ip not answered as banned"));
	}

	/** Both budgets spent, then two requests of both: the user's budget refuses them, twice. */
	private static String bothSpent(RateLimitStore store) {
		Acquisition user = new Acquisition("login", ONE, "alice", 1, 0, BAN);
		Acquisition ip = new Acquisition("login-ip", ONE, "198.51.100.7", 1, 0, BAN);
		store.admitAll(List.of(user, ip));
		List<String> firstPlaces = new ArrayList<>();
		for (int i = 0; i < 2; i++) {
			firstPlaces.add(store.admitAll(List.of(user, ip)).get(0).place().name());
		}
		return String.join(",", firstPlaces) + " user " + ((store.bannedNanos(user) > 0) ? "banned" : "not banned")
				+ ", ip " + ((store.bannedNanos(ip) > 0) ? "banned" : "not banned");
	}

	/** The address banned on its own, the user's budget spent: a request of both is the user's refusal. */
	private static String laterOneBanned(RateLimitStore store) {
		Acquisition user = new Acquisition("login", ONE, "bob", 1, 0, BAN);
		Acquisition ip = new Acquisition("login-ip", ONE, "198.51.100.8", 1, 0, BAN);
		for (int i = 0; i < 3; i++) {
			store.admitAll(List.of(ip));
		}
		store.admitAll(List.of(user));
		List<Receipt> receipts = store.admitAll(List.of(user, ip));
		return "user " + (receipts.get(0).decision().isAllowed() ? "allowed" : "refused") + ", ip "
				+ ((receipts.get(1).place() == Receipt.Place.BANNED) ? "answered as banned" : "not answered as banned");
	}

	private static List<String> onEveryStore(Function<RateLimitStore, String> sequence) {
		List<String> outcomes = new ArrayList<>();
		outcomes.add(sequence.apply(new CaffeineRateLimitStore(1000, RateLimitClock.SYSTEM)));
		redis.commands().flushall();
		try (RedisRateLimitStore store = RedisRateLimitStore.builder(redis.connectionFactory())
			.timeout(Duration.ofSeconds(2)).build()) {
			outcomes.add(sequence.apply(store));
		}
		TestRedisCluster cluster = TestRedisCluster.shared();
		LettuceConnectionFactory factory = cluster.connectionFactory();
		try (RedisRateLimitStore store = RedisRateLimitStore.builder(factory).timeout(Duration.ofSeconds(2)).build()) {
			assertThat(SlotHash.getSlot(store.redisKey("login", "alice")))
				.as("the keys sit in different slots: one call each")
				.isNotEqualTo(SlotHash.getSlot(store.redisKey("login-ip", "198.51.100.7")));
			outcomes.add(sequence.apply(store));
		}
		finally {
			factory.destroy();
		}
		return outcomes;
	}

}
