package io.github.ratelimit.web.limiter;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import org.springframework.mock.web.MockHttpServletRequest;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.CaffeineRateLimitStore;
import io.github.ratelimit.test.ManualClock;
import io.github.ratelimit.web.CountMode;
import io.github.ratelimit.web.DecisionOutcome;
import io.github.ratelimit.web.DecisionRecorder;
import io.github.ratelimit.web.OnLimit;
import io.github.ratelimit.web.clientip.ClientIpResolver;
import io.github.ratelimit.web.key.KeyResolvers;
import io.github.ratelimit.web.key.KeyResolversTests;
import io.github.ratelimit.web.key.UnreadableRequestException;
import io.github.ratelimit.web.policy.PolicyDefinition;
import io.github.ratelimit.web.policy.RateLimitExemptions;
import io.github.ratelimit.web.policy.RateLimitPolicy;
import io.github.ratelimit.web.policy.TestPolicies;
import io.github.ratelimit.web.servlet.ServletRequestView;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * A policy that cannot tell a request's key, plan or exemption throws before any store call when it is
 * enforced, and falls back (noted for the count) when it only observes.
 */
class UnreadableRequestTests {

	private final ManualClock clock = new ManualClock();

	private final KeyResolvers keyResolvers = new KeyResolvers(ClientIpResolver.builder().build(), null);

	private final CaffeineRateLimitStore store = new CaffeineRateLimitStore(1000, this.clock);

	private final List<String> outcomes = new ArrayList<>();

	private final RequestLimiter limiter = new RequestLimiter(this.store, new DecisionRecorder() {
		@Override
		public void decided(String policy, DecisionOutcome outcome) {
			UnreadableRequestTests.this.outcomes.add(policy + "=" + outcome.tag());
		}
	}, new RejectionLog(this.clock, Duration.ofMinutes(1)), false, 100, RateLimitExemptions.NONE);

	@Test
	void anEnforcedPolicyThatCannotTellTheKeyThrowsBeforeAnyBudgetIsSpent() {
		RateLimitPolicy byIp = policy("by-ip", "ip", false);
		RateLimitPolicy byName = policy("by-name", "param:username", false);
		MockHttpServletRequest request = new KeyResolversTests.UndecodableRequest();
		request.setParameter("username", "victim");
		assertThatExceptionOfType(UnreadableRequestException.class)
			.isThrownBy(() -> this.limiter.decide(view(request), List.of(byIp, byName)))
			.satisfies((ex) -> {
				assertThat(ex.policy()).isEqualTo("by-name");
				assertThat(ex.reason()).isEqualTo("its parameters cannot be decoded");
			});
		assertThat(this.store.peek(new Acquisition(byIp.id(), byIp.limit(), "ip:192.0.2.1", 1, 0)).remaining())
			.as("the other policy spent nothing either").isEqualTo(3);
		assertThat(this.outcomes).isEmpty();
	}

	@Test
	void aShadowPolicyThatCannotTellTheKeyFallsBackToTheClientIp() {
		RateLimitPolicy enforced = policy("enforced", "ip", false);
		RateLimitPolicy shadow = policy("watching", "param:username", true);
		ServletRequestView request = view(new KeyResolversTests.UndecodableRequest());
		RequestDecision result = new RequestDecision(this.limiter.decide(request, List.of(enforced, shadow)));
		assertThat(result.isAllowed()).isTrue();
		assertThat(this.outcomes).containsExactly("enforced=allowed", "watching=allowed", "watching=shadow-unreadable");
		assertThat(request.takeFallbacks()).as("recorded once, by the limiter").isEmpty();
		assertThat(this.store.peek(new Acquisition(shadow.id(), shadow.limit(), "ip:192.0.2.1", 1, 0)).remaining())
			.as("counted under the client IP, as before").isEqualTo(2);
	}

	@Test
	void aShadowCopyFallsBackForItsPlanAndExemptionToo() {
		RateLimitPolicy policy = TestPolicies.planned(policy("planned", "ip", false),
				"#{header('X-Plan').substring(0, 3)}", Map.of("pro", new RateLimitPolicy.Plan(10L, null, null)),
				"header('X-Probe').length() > 3", this.keyResolvers);
		MockHttpServletRequest servlet = new MockHttpServletRequest();
		servlet.addHeader("X-Plan", "p");
		ServletRequestView request = view(servlet);
		assertThatExceptionOfType(UnreadableRequestException.class).isThrownBy(() -> policy.isExempt(request))
			.satisfies((ex) -> assertThat(ex.policy()).isEqualTo("planned"));
		assertThatExceptionOfType(UnreadableRequestException.class).isThrownBy(() -> policy.inForceFor(request));
		RateLimitPolicy shadow = policy.inShadow();
		assertThat(policy.inShadow()).as("one shadow copy").isSameAs(shadow);
		assertThat(shadow.isExempt(request)).isFalse();
		assertThat(shadow.inForceFor(request)).isSameAs(shadow);
		assertThat(request.takeFallbacks()).containsExactly("planned");
		assertThat(policy.readsParameters()).isFalse();
		assertThat(policy("p", "param:u", false).readsParameters()).isTrue();
	}

	private RateLimitPolicy policy(String name, String key, boolean shadow) {
		return TestPolicies.define(new PolicyDefinition(name, name, "rate-limit.policies." + name, false,
				Algorithm.TOKEN_BUCKET, 3L, Duration.ofMinutes(1), null, key, 1, OnLimit.REJECT, Duration.ZERO,
				CountMode.ALL, shadow), this.keyResolvers);
	}

	private static ServletRequestView view(MockHttpServletRequest request) {
		return new ServletRequestView(request, ClientIpResolver.builder().build());
	}
}
