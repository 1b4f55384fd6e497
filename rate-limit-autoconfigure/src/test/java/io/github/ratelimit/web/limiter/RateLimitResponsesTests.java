package io.github.ratelimit.web.limiter;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;


import org.springframework.http.HttpHeaders;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.Decision;
import io.github.ratelimit.core.Receipt;
import io.github.ratelimit.web.CountMode;
import io.github.ratelimit.web.HeaderStyle;
import io.github.ratelimit.web.OnLimit;
import io.github.ratelimit.web.clientip.ClientIpResolver;
import io.github.ratelimit.web.key.KeyResolvers;
import io.github.ratelimit.web.policy.PolicyDefinition;
import io.github.ratelimit.web.policy.RateLimitPolicy;
import io.github.ratelimit.web.policy.TestPolicies;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Headers and problem bodies, for values a running server rarely produces.
 */
class RateLimitResponsesTests {

	private final KeyResolvers keyResolvers = new KeyResolvers(ClientIpResolver.builder().build(), null);

	@Test
	void secondsAreRoundedUp() {
		assertThat(RequestDecision.seconds(0)).isZero();
		assertThat(RequestDecision.seconds(1)).isEqualTo(1);
		assertThat(RequestDecision.seconds(1_000_000_000)).isEqualTo(1);
		assertThat(RequestDecision.seconds(1_000_000_001)).isEqualTo(2);
	}

	@Test
	void retryAfterIsAtLeastOneSecondAndTheLongestWait() {
		RequestDecision result = result(List.of(policy("a"), policy("b")),
				List.of(Decision.rejected(1, 0, 5, 3), Decision.rejected(1, 0, 5, 2_500_000_000L)));
		assertThat(result.retryAfterSeconds()).isEqualTo(3);
		RequestDecision tiny = result(List.of(policy("a")), List.of(Decision.rejected(1, 0, 5, 1)));
		assertThat(tiny.retryAfterSeconds()).isEqualTo(1);
	}

	@Test
	void theMostRestrictiveLimitFillsTheLegacyHeaders() {
		RequestDecision result = result(List.of(policy("a"), policy("b"), policy("c")),
				List.of(Decision.allowed(10, 7, 100), Decision.allowed(5, 2, 100), Decision.allowed(50, 2, 900)));
		assertThat(result.mostRestrictive()).isSameAs(result.checks().get(2));
		TestHeaders response = new TestHeaders();
		new RateLimitHeaders(List.of(HeaderStyle.LEGACY)).write(result, response);
		assertThat(response.getHeader("X-RateLimit-Limit")).isEqualTo("50");
		assertThat(response.getHeader("X-RateLimit-Remaining")).isEqualTo("2");
		assertThat(response.getHeader("X-RateLimit-Reset")).isEqualTo("1");
	}

	@Test
	void headerValuesAreTheirDecimalTextsWhateverTheirSize() {
		// Small values come from a table written once, larger ones are written per response.
		for (long value : new long[] { 0, 1, 9, 10, 1023, 1024, 1025, 999_999_999, Long.MAX_VALUE }) {
			assertThat(RateLimitHeaders.text(value)).isEqualTo(Long.toString(value));
		}
		RateLimitPolicy api = policy("api");
		// The policy's limit is 1; a decision may report another (a plan's, a store's).
		RequestDecision result = result(List.of(api),
				List.of(Decision.allowed(1_000_000_000L, 1024, 61_000_000_000L, 1_500_000_000L)));
		TestHeaders response = new TestHeaders();
		new RateLimitHeaders(List.of(HeaderStyle.BOTH, HeaderStyle.DRAFT_6)).write(result, response);
		assertThat(response.getHeader("X-RateLimit-Limit")).isEqualTo("1000000000");
		assertThat(response.getHeader("X-RateLimit-Remaining")).isEqualTo("1024");
		assertThat(response.getHeader("X-RateLimit-Reset")).isEqualTo("61");
		assertThat(response.getHeader("RateLimit-Limit")).isEqualTo("1000000000");
		assertThat(response.getHeader("RateLimit-Remaining")).isEqualTo("1024");
		assertThat(response.getHeader("RateLimit-Reset")).isEqualTo("61");
		assertThat(response.getHeader("RateLimit-Policy")).isEqualTo("\"api\";q=1;w=1");
		assertThat(response.getHeader("RateLimit")).isEqualTo("\"api\";r=1024;t=2");
		TestHeaders own = new TestHeaders();
		new RateLimitHeaders(List.of(HeaderStyle.LEGACY)).write(result(List.of(api),
				List.of(Decision.allowed(1, 0, 1_000_000_000L))), own);
		assertThat(own.getHeader("X-RateLimit-Limit")).isEqualTo("1");
		assertThat(own.getHeader("X-RateLimit-Remaining")).isEqualTo("0");
	}

	@Test
	void aSecondWriteWhoseMostRestrictiveLimitIsAConcurrencyLimitLeavesNoResetOfTheFirst() {
		// Ahead of Spring Security: the rules' headers first, then those of the rules and the handler's limits.
		RateLimitPolicy rule = policy("rule");
		RateLimitPolicy slots = TestPolicies.define(new PolicyDefinition("slots", "slots", "test", false,
				Algorithm.CONCURRENCY, 2L, null, null, "ip", 1, OnLimit.REJECT, Duration.ZERO, CountMode.ALL, false),
				this.keyResolvers);
		RequestDecision rules = result(List.of(rule), List.of(Decision.allowed(10, 9, 5_000_000_000L)));
		RequestDecision joined = new RequestDecision(List.of(rules.checks().get(0),
				result(List.of(slots), List.of(Decision.allowed(2, 1, 0))).checks().get(0)));
		TestHeaders response = new TestHeaders();
		RateLimitHeaders headers = new RateLimitHeaders(List.of(HeaderStyle.LEGACY, HeaderStyle.DRAFT_6));
		headers.write(rules, response);
		assertThat(response.getHeader("X-RateLimit-Reset")).isEqualTo("5");
		headers.write(joined, response);
		assertThat(response.getHeader("X-RateLimit-Limit")).isEqualTo("2");
		assertThat(response.getHeader("X-RateLimit-Remaining")).isEqualTo("1");
		assertThat(response.containsHeader("X-RateLimit-Reset")).isFalse();
		assertThat(response.containsHeader("RateLimit-Reset")).isFalse();
	}

	/** A result as the limiter builds it: one check per policy, each with its decision. */
	private static RequestDecision result(List<RateLimitPolicy> policies, List<Decision> decisions) {
		List<Check> checks = new ArrayList<>();
		for (int i = 0; i < policies.size(); i++) {
			RateLimitPolicy policy = policies.get(i);
			Acquisition acquisition = new Acquisition(policy.id(), policy.limit(), "ip:203.0.113.7", 1, 0);
			Receipt receipt = new Receipt(acquisition, decisions.get(i), Receipt.NO_MARK, Receipt.Place.STORE);
			checks.add(new Check(policy, acquisition, receipt, decisions.get(i), true));
		}
		return new RequestDecision(checks);
	}

	private RateLimitPolicy policy(String name) {
		return TestPolicies.define(new PolicyDefinition(name, name, "test", false, Algorithm.TOKEN_BUCKET, 1L,
				Duration.ofSeconds(1), null, "ip", 1, OnLimit.REJECT, Duration.ZERO, CountMode.ALL, false), this.keyResolvers);
	}

	/** A response's headers, as a web stack holds them. */
	static final class TestHeaders implements ResponseHeaders {

		private final HttpHeaders headers = new HttpHeaders();

		@Override
		public void set(String name, String value) {
			this.headers.set(name, value);
		}

		@Override
		public void remove(String name) {
			this.headers.remove(name);
		}

		@Nullable String getHeader(String name) {
			return this.headers.getFirst(name);
		}

		boolean containsHeader(String name) {
			return this.headers.containsHeader(name);
		}

	}
}
