package io.github.ratelimit.web;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import tools.jackson.databind.PropertyNamingStrategies;
import tools.jackson.databind.PropertyNamingStrategy;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.http.converter.StringHttpMessageConverter;
import org.springframework.http.converter.json.JacksonJsonHttpMessageConverter;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;

import io.github.ratelimit.core.Decision;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Headers and problem bodies, for values a running server rarely produces.
 */
class RateLimitResponsesTests {

	private final KeyResolvers keyResolvers = new KeyResolvers(new ClientIpResolver(List.of()), null);

	@Test
	void secondsAreRoundedUp() {
		assertThat(RateLimitResult.seconds(0)).isZero();
		assertThat(RateLimitResult.seconds(1)).isEqualTo(1);
		assertThat(RateLimitResult.seconds(1_000_000_000)).isEqualTo(1);
		assertThat(RateLimitResult.seconds(1_000_000_001)).isEqualTo(2);
	}

	@Test
	void retryAfterIsAtLeastOneSecondAndTheLongestWait() {
		RateLimitResult result = new RateLimitResult(List.of(policy("a"), policy("b")),
				List.of(Decision.rejected(1, 0, 5, 3), Decision.rejected(1, 0, 5, 2_500_000_000L)));
		assertThat(result.retryAfterSeconds()).isEqualTo(3);
		RateLimitResult tiny = new RateLimitResult(List.of(policy("a")), List.of(Decision.rejected(1, 0, 5, 1)));
		assertThat(tiny.retryAfterSeconds()).isEqualTo(1);
	}

	@Test
	void theMostRestrictiveLimitFillsTheLegacyHeaders() {
		RateLimitResult result = new RateLimitResult(List.of(policy("a"), policy("b"), policy("c")),
				List.of(Decision.allowed(10, 7, 100), Decision.allowed(5, 2, 100), Decision.allowed(50, 2, 900)));
		assertThat(result.mostRestrictive()).isEqualTo(2);
		MockHttpServletResponse response = new MockHttpServletResponse();
		new RateLimitHeaders(HeaderStyle.LEGACY).write(result, response);
		assertThat(response.getHeader("X-RateLimit-Limit")).isEqualTo("50");
		assertThat(response.getHeader("X-RateLimit-Remaining")).isEqualTo("2");
		assertThat(response.getHeader("X-RateLimit-Reset")).isEqualTo("1");
	}

	@Test
	void policyNamesAreQuotedAsStructuredFieldStrings() {
		assertThat(RateLimitHeaders.sfString("api")).isEqualTo("\"api\"");
		assertThat(RateLimitHeaders.sfString("say \"hi\" \\ now")).isEqualTo("\"say \\\"hi\\\" \\\\ now\"");
		assertThat(RateLimitHeaders.sfString("caf\u00e9\n")).isEqualTo("\"caf??\"");
	}

	@Test
	void problemBodiesEscapeWhatTheyQuote() throws Exception {
		RateLimitResult result = new RateLimitResult(List.of(policy("we\"ird\\name\u0001")),
				List.of(Decision.rejected(1, 0, 5, 1)));
		MockHttpServletRequest request = new MockHttpServletRequest("GET", "/a b/\"c\"");
		MockHttpServletResponse response = new MockHttpServletResponse();
		new ProblemDetailRejectionHandler().reject(request, response, result);
		assertThat(response.getStatus()).isEqualTo(429);
		assertThat(response.getContentAsString()).contains("\"violated-policies\":[\"we\\\"ird\\\\name\\u0001\"]")
			.contains("\"instance\":\"/a%20b/%22c%22\"");
		assertThat(response.getContentLength()).isEqualTo(response.getContentAsByteArray().length);
	}

	@Test
	void theApplicationsJsonLibraryWritesTheProblemWithRfcMemberNamesWhateverItsNamingStrategy() throws Exception {
		RateLimitResult result = new RateLimitResult(List.of(policy("api")), List.of(Decision.rejected(1, 0, 5, 1)));
		MockHttpServletRequest request = new MockHttpServletRequest("GET", "/x");
		MockHttpServletResponse plain = new MockHttpServletResponse();
		new ProblemDetailRejectionHandler().reject(request, plain, result);
		for (PropertyNamingStrategy strategy : List.of(PropertyNamingStrategies.UPPER_CAMEL_CASE,
				PropertyNamingStrategies.SNAKE_CASE, PropertyNamingStrategies.KEBAB_CASE)) {
			JsonMapper mapper = JsonMapper.builder()
				.propertyNamingStrategy(strategy)
				.enable(SerializationFeature.INDENT_OUTPUT)
				.build();
			MockHttpServletResponse response = new MockHttpServletResponse();
			new ProblemDetailRejectionHandler(() -> List.of(new StringHttpMessageConverter(),
					new JacksonJsonHttpMessageConverter(mapper))).reject(request, response, result);
			assertThat(response.getStatus()).isEqualTo(429);
			assertThat(response.getContentType()).isEqualTo("application/problem+json");
			assertThat(response.getHeader("Cache-Control")).isEqualTo("no-store");
			String body = response.getContentAsString();
			assertThat(body).as("written by the application's mapper (indented)").contains("\n");
			Map<String, Object> members = JsonMapper.builder().build().readValue(body, LinkedHashMap.class);
			assertThat(members).as(strategy.getClass().getSimpleName())
				.isEqualTo(JsonMapper.builder().build().readValue(plain.getContentAsString(), LinkedHashMap.class));
			assertThat(members.keySet()).containsExactly("type", "title", "status", "detail", "instance",
					"violated-policies");
		}
	}

	@Test
	void theInstanceIsThePathAsSentNotEncodedAgain() {
		assertThat(ProblemDetailRejectionHandler.instance("/api/reports/%31")).hasToString("/api/reports/%31");
		assertThat(ProblemDetailRejectionHandler.instance("/a%2Fb/%E2%82%AC")).hasToString("/a%2Fb/%E2%82%AC");
		assertThat(ProblemDetailRejectionHandler.instance("/a b")).hasToString("/a%20b");
		assertThat(ProblemDetailRejectionHandler.instance(null)).isNull();
	}

	private RateLimitPolicy policy(String name) {
		return RateLimitPolicy.define(new RateLimitPolicy.Definition(name, name, "test", false, "token-bucket", 1L,
				Duration.ofSeconds(1), null, "ip", 1, OnLimit.REJECT, Duration.ZERO, CountMode.ALL, false), this.keyResolvers);
	}
}
