package io.github.ratelimit.web.policy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.boot.convert.DurationStyle;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.Ban;
import io.github.ratelimit.core.CaffeineRateLimitStore;
import io.github.ratelimit.core.Decision;
import io.github.ratelimit.core.RateLimitConfigurationException;
import io.github.ratelimit.core.Receipt;
import io.github.ratelimit.test.ManualClock;
import io.github.ratelimit.web.CountMode;
import io.github.ratelimit.web.OnLimit;
import io.github.ratelimit.web.clientip.ClientIpResolver;
import io.github.ratelimit.web.key.KeyResolvers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The delay of {@code slow-down}, from a key's state in a real store on a {@link ManualClock}: nothing
 * until {@code after} units are spent, then {@code delay}, doubling per unit, at most {@code max-delay},
 * and never for a rejection. And what a policy's {@code ban} asks of the store.
 */
class BruteForcePolicyTests {

	private static final long SECOND = 1_000_000_000L;

	private final KeyResolvers keyResolvers = new KeyResolvers(ClientIpResolver.builder().build(), null);

	private final ManualClock clock = new ManualClock();

	private final CaffeineRateLimitStore store = new CaffeineRateLimitStore(1000, this.clock);

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
	void theIssuesExampleUnderEveryAlgorithm(Algorithm algorithm) {
		RateLimitPolicy login = login(algorithm, 5, 1).withSlowDown(slowDown(2, "1s", "8s"), "slow-down");
		assertThat(waits(login, "mallory", 6)).containsExactly(0L, 0L, SECOND, 2 * SECOND, 4 * SECOND, -1L);
		assertThat(waits(login, "alice", 1)).as("another key").containsExactly(0L);
	}

	@Test
	void theDelayStopsAtMaxDelayAndNeverOverflows() {
		RateLimitPolicy policy = login(Algorithm.FIXED_WINDOW, 100, 1).withSlowDown(slowDown(0, "1s", "3s"), "slow-down");
		assertThat(waits(policy, "k", 4)).containsExactly(SECOND, 2 * SECOND, 3 * SECOND, 3 * SECOND);
		RateLimitPolicy many = login(Algorithm.FIXED_WINDOW, 1000, 1).withSlowDown(slowDown(0, "1ns", "36500d"), "slow-down");
		List<Long> waits = waits(many, "other", 1000);
		assertThat(waits.get(61)).isEqualTo(1L << 61);
		assertThat(waits.subList(62, 1000)).as("2^62 ns is above 100 years").containsOnly(Duration.ofDays(36500).toNanos());
	}

	@Test
	void aRequestOfHigherCostCountsTheUnitsSpentBeforeIt() {
		RateLimitPolicy policy = login(Algorithm.TOKEN_BUCKET, 6, 2).withSlowDown(slowDown(2, "1s", "8s"), "slow-down");
		assertThat(waits(policy, "k", 4)).as("0, 2 and 4 units spent before each").containsExactly(0L, SECOND, 4 * SECOND, -1L);
	}

	@Test
	void refillMakesTheDelayShorter() {
		RateLimitPolicy login = login(Algorithm.TOKEN_BUCKET, 5, 1).withSlowDown(slowDown(2, "1s", "8s"), "slow-down");
		assertThat(waits(login, "k", 4)).containsExactly(0L, 0L, SECOND, 2 * SECOND);
		this.clock.advance(Duration.ofMinutes(6));
		assertThat(waits(login, "k", 1)).as("two units refilled in 6 of 15 minutes").containsExactly(SECOND);
	}

	@Test
	void aRuntimeChangeOrAPlanThatLeavesNothingToSlowDownIsRefusedNamingTheBurst() {
		RateLimitPolicy login = login(Algorithm.TOKEN_BUCKET, 5, 1).withSlowDown(slowDown(2, "1s", "8s"), "slow-down");
		assertThatExceptionOfType(RateLimitConfigurationException.class)
			.isThrownBy(() -> login.limits().replace(new RateLimitPolicy.Change(2L, null, null, null)))
			.satisfies((ex) -> assertThat(ex.getOrigin()).isEqualTo("rate-limit.policies.login.burst"))
			.withMessageContaining("the burst (2) would be no more than slow-down.after (2)");
		assertThat(login.limit().limit()).as("nothing changed").isEqualTo(5);
		RateLimitPolicy planned = login(Algorithm.TOKEN_BUCKET, 5, 1).withPlans("header:X-Plan", Map.of(), this.keyResolvers,
				"rate-limit.policies.login").withSlowDown(slowDown(2, "1s", "8s"), "slow-down");
		assertThatExceptionOfType(RateLimitConfigurationException.class)
			.isThrownBy(() -> planned.limits().replace(new RateLimitPolicy.Change(null, null, null,
					Map.of("trial", new RateLimitPolicy.Plan(2L, null, null)))))
			.satisfies((ex) -> assertThat(ex.getOrigin()).isEqualTo("rate-limit.policies.login.plans.trial.burst"));
	}

	@Test
	void aStoreThatCouldNotDecideSlowsNothingDown() {
		RateLimitPolicy login = login(Algorithm.TOKEN_BUCKET, 5, 1).withSlowDown(slowDown(0, "1s", "8s"), "slow-down");
		Acquisition acquisition = new Acquisition(login.id(), login.limit(), "k", 1, 0);
		Receipt failedOpen = new Receipt(acquisition, Decision.allowed(5, 5, 0), Receipt.NO_MARK,
				Receipt.Place.NOWHERE);
		assertThat(login.slowDownNanos(failedOpen)).isZero();
	}

	@Test
	void aBanCountsWithinThePolicysPeriodByDefaultAndAShadowCopyNeverBans() {
		RateLimitPolicy login = login(Algorithm.TOKEN_BUCKET, 5, 1)
			.withBan(new RateLimitPolicy.BanSettings(3L, null, Duration.ofHours(24)), "rate-limit.policies.login.ban");
		assertThat(login.acquisitionOf("param:alice").ban())
			.isEqualTo(new Ban(3, Duration.ofMinutes(15).toNanos(), Duration.ofHours(24).toNanos()));
		assertThat(login.inShadow().acquisitionOf("param:alice").ban()).isNull();
		RateLimitPolicy within = login(Algorithm.TOKEN_BUCKET, 5, 1).withBan(
				new RateLimitPolicy.BanSettings(3L, Duration.ofHours(1), Duration.ofHours(24)), "rate-limit.policies.login.ban");
		assertThat(within.acquisitionOf("k").ban().withinNanos()).isEqualTo(Duration.ofHours(1).toNanos());
	}

	/** The waits of {@code attempts} attempts of one key, one after another; -1 for a rejection. */
	private List<Long> waits(RateLimitPolicy policy, String key, int attempts) {
		List<Long> waits = new ArrayList<>();
		for (int i = 0; i < attempts; i++) {
			Receipt receipt = this.store.admitAll(List.of(new Acquisition(policy.id(), policy.limit(), key, policy.cost(), 0)))
				.get(0);
			waits.add(receipt.decision().isAllowed() ? policy.slowDownNanos(receipt) : -1L);
		}
		return waits;
	}

	private RateLimitPolicy login(Algorithm algorithm, long limit, long cost) {
		return RateLimitPolicy.define(new PolicyDefinition("login", "login", "rate-limit.policies.login", false, algorithm,
				limit, Duration.ofMinutes(15), null, "param:username", cost, OnLimit.REJECT, Duration.ZERO,
				CountMode.FAILURES, false), this.keyResolvers);
	}

	private static RateLimitPolicy.SlowDown slowDown(long after, String delay, String maxDelay) {
		return new RateLimitPolicy.SlowDown(after, DurationStyle.detectAndParse(delay),
				DurationStyle.detectAndParse(maxDelay));
	}

}
