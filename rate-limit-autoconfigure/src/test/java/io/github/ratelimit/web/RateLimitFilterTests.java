package io.github.ratelimit.web;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;

import org.springframework.mock.web.MockFilterChain;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;
import org.springframework.web.util.pattern.PathPatternParser;

import io.github.ratelimit.core.ManualClock;
import io.github.ratelimit.core.caffeine.CaffeineRateLimitStore;

import static org.assertj.core.api.Assertions.assertThat;

class RateLimitFilterTests {

	private final ManualClock clock = new ManualClock();

	private final KeyResolvers keyResolvers = new KeyResolvers(new ClientIpResolver(List.of()), null);

	private final RateLimitPolicy api = RateLimitPolicy.define(new RateLimitPolicy.Definition("api", "api",
			"rate-limit.policies.api", false, "token-bucket", 2L, Duration.ofSeconds(10), null, "ip", 1, OnLimit.REJECT,
			Duration.ZERO, CountMode.ALL, false), this.keyResolvers);

	@Test
	void allowedRequestsPassWithHeadersAndRejectedOnesStop() throws Exception {
		RateLimitFilter filter = filter(HeaderStyle.BOTH);
		MockHttpServletResponse first = send(filter, "/api/x");
		assertThat(first.getStatus()).isEqualTo(200);
		assertThat(first.getHeader("X-RateLimit-Remaining")).isEqualTo("1");
		assertThat(first.getHeader("X-RateLimit-Reset")).isEqualTo("5");
		assertThat(first.getHeader("RateLimit")).isEqualTo("\"api\";r=1;t=5");
		assertThat(first.getHeader("Retry-After")).isNull();
		send(filter, "/api/x");
		MockFilterChain chain = new MockFilterChain();
		MockHttpServletResponse rejected = new MockHttpServletResponse();
		filter.doFilter(request("/api/x"), rejected, chain);
		assertThat(chain.getRequest()).as("the chain did not run").isNull();
		assertThat(rejected.getStatus()).isEqualTo(429);
		assertThat(rejected.getHeader("Retry-After")).isEqualTo("5");
		assertThat(rejected.getContentType()).isEqualTo("application/problem+json");
	}

	@Test
	void unmatchedRequestsPassUntouched() throws Exception {
		MockHttpServletResponse response = send(filter(HeaderStyle.BOTH), "/other");
		assertThat(response.getHeaderNames()).isEmpty();
	}

	@Test
	void headerStylesWriteOnlyTheirHeadersButRetryAfterAlways() throws Exception {
		for (HeaderStyle style : HeaderStyle.values()) {
			RateLimitFilter filter = filter(style);
			send(filter, "/api/x");
			send(filter, "/api/x");
			MockHttpServletResponse rejected = send(filter, "/api/x");
			assertThat(rejected.getHeader("Retry-After")).as(style.name()).isEqualTo("5");
			assertThat(rejected.containsHeader("X-RateLimit-Limit")).as(style.name()).isEqualTo(style.legacy());
			assertThat(rejected.containsHeader("RateLimit")).as(style.name()).isEqualTo(style.ietf());
			assertThat(rejected.containsHeader("RateLimit-Policy")).as(style.name()).isEqualTo(style.ietf());
			assertThat(rejected.containsHeader("RateLimit-Limit")).as(style.name()).isEqualTo(style.draft6());
			assertThat(rejected.containsHeader("RateLimit-Remaining")).as(style.name()).isEqualTo(style.draft6());
			assertThat(rejected.containsHeader("RateLimit-Reset")).as(style.name()).isEqualTo(style.draft6());
		}
	}

	@Test
	void stylesCombineAndDraft6SaysWhatTheLegacyHeadersSay() throws Exception {
		RateLimitFilter filter = new RateLimitFilter(resolver(), limiter(),
				new RateLimitHeaders(List.of(HeaderStyle.LEGACY, HeaderStyle.DRAFT_6)), new ProblemDetailRejectionHandler(),
				RequestDelay.SLEEP);
		MockHttpServletResponse first = send(filter, "/api/x");
		assertThat(first.getHeader("RateLimit-Limit")).isEqualTo("2").isEqualTo(first.getHeader("X-RateLimit-Limit"));
		assertThat(first.getHeader("RateLimit-Remaining")).isEqualTo("1")
			.isEqualTo(first.getHeader("X-RateLimit-Remaining"));
		assertThat(first.getHeader("RateLimit-Reset")).as("delta seconds until full").isEqualTo("5")
			.isEqualTo(first.getHeader("X-RateLimit-Reset"));
		assertThat(first.containsHeader("RateLimit")).isFalse();
		assertThat(first.containsHeader("RateLimit-Policy")).isFalse();
		this.clock.advance(Duration.ofSeconds(1));
		send(filter, "/api/x");
		MockHttpServletResponse rejected = send(filter, "/api/x");
		assertThat(rejected.getHeader("RateLimit-Remaining")).isEqualTo("0");
		assertThat(rejected.getHeader("RateLimit-Reset")).isEqualTo("9").isEqualTo(rejected.getHeader("X-RateLimit-Reset"));
		assertThat(rejected.getHeader("Retry-After")).isEqualTo("4");
	}

	@Test
	void tIsTheTimeUntilTheNextTokenAndRetryAfterNeverComesBeforeIt() throws Exception {
		RateLimitFilter filter = filter(HeaderStyle.IETF);
		send(filter, "/api/x");
		this.clock.advance(Duration.ofMillis(3500));
		MockHttpServletResponse second = send(filter, "/api/x");
		// 2 per 10 s: the first token is back in 1.5 s, the bucket is full in 6.5 s
		assertThat(second.getHeader("RateLimit")).isEqualTo("\"api\";r=0;t=2");
		MockHttpServletResponse rejected = send(filter, "/api/x");
		assertThat(rejected.getHeader("RateLimit")).isEqualTo("\"api\";r=0;t=2");
		assertThat(rejected.getHeader("Retry-After")).isEqualTo("2");
	}

	@Test
	void aCustomRejectionHandlerWritesTheRejection() throws Exception {
		RateLimitFilter filter = new RateLimitFilter(resolver(), limiter(),
				new RateLimitHeaders(HeaderStyle.BOTH), (request, response, result) -> {
					response.setStatus(503);
					response.getWriter().write("busy: " + result.violatedPolicies());
				}, RequestDelay.SLEEP);
		send(filter, "/api/x");
		send(filter, "/api/x");
		MockHttpServletResponse rejected = send(filter, "/api/x");
		assertThat(rejected.getStatus()).isEqualTo(503);
		assertThat(rejected.getContentAsString()).isEqualTo("busy: [api]");
		assertThat(rejected.getHeader("Retry-After")).isEqualTo("5");
	}

	@Test
	void corsPreflightsSpendNoBudgetButOtherOptionsRequestsDo() throws Exception {
		RateLimitFilter filter = filter(HeaderStyle.BOTH);
		for (int i = 0; i < 5; i++) {
			MockHttpServletRequest preflight = request("/api/x");
			preflight.setMethod("OPTIONS");
			preflight.addHeader("Origin", "https://app.example");
			preflight.addHeader("Access-Control-Request-Method", "POST");
			MockFilterChain chain = new MockFilterChain();
			MockHttpServletResponse response = new MockHttpServletResponse();
			filter.doFilter(preflight, response, chain);
			assertThat(chain.getRequest()).as("the preflight went on").isNotNull();
			assertThat(response.getHeaderNames()).isEmpty();
		}
		MockHttpServletRequest plainOptions = request("/api/x");
		plainOptions.setMethod("OPTIONS");
		MockHttpServletResponse counted = new MockHttpServletResponse();
		filter.doFilter(plainOptions, counted, new MockFilterChain());
		assertThat(counted.getHeader("X-RateLimit-Remaining")).as("not a preflight: counted").isEqualTo("1");
		assertThat(send(filter, "/api/x").getHeader("X-RateLimit-Remaining")).isEqualTo("0");
	}

	private RateLimitFilter filter(HeaderStyle style) {
		return new RateLimitFilter(resolver(), limiter(), new RateLimitHeaders(style),
				new ProblemDetailRejectionHandler(), RequestDelay.SLEEP);
	}

	private RequestLimiter limiter() {
		return new RequestLimiter(new CaffeineRateLimitStore(100, this.clock), DecisionRecorder.NONE,
				new RejectionLog(this.clock, Duration.ofMinutes(1)), false);
	}

	private RateLimitPolicyResolver resolver() {
		PathRule rule = new PathRule(PathPatternParser.defaultInstance.parse("/api/**"), Set.of(), List.of(this.api));
		AnnotatedEndpoints none = new AnnotatedEndpoints(List::of, new RateLimitPolicies(Map.of()), this.keyResolvers);
		none.afterSingletonsInstantiated();
		return new RateLimitPolicyResolver(List.of(rule), none);
	}

	private static MockHttpServletResponse send(RateLimitFilter filter, String path) throws Exception {
		MockHttpServletResponse response = new MockHttpServletResponse();
		filter.doFilter(request(path), response, new MockFilterChain());
		return response;
	}

	private static MockHttpServletRequest request(String path) {
		MockHttpServletRequest request = new MockHttpServletRequest("GET", path);
		request.setRemoteAddr("203.0.113.7");
		return request;
	}
}
