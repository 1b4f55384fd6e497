package io.github.ratelimit.web;

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
import io.github.ratelimit.web.limiter.Problems;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Problem bodies, for values a running server rarely produces; the handler sees only the public
 * {@link RateLimitResult}.
 */
class ProblemDetailRejectionHandlerTests {

	@Test
	void problemBodiesEscapeWhatTheyQuote() throws Exception {
		RateLimitResult result = rejected("we\"ird\\name\u0001");
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
		RateLimitResult result = rejected("api");
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
		assertThat(Problems.instance("/api/reports/%31")).hasToString("/api/reports/%31");
		assertThat(Problems.instance("/a%2Fb/%E2%82%AC")).hasToString("/a%2Fb/%E2%82%AC");
		assertThat(Problems.instance("/a b")).hasToString("/a%20b");
		assertThat(Problems.instance(null)).isNull();
	}

	/** A rejection by one policy, as a custom handler's test would build it. */
	private static RateLimitResult rejected(String policy) {
		Decision decision = Decision.rejected(1, 0, 5, 1);
		return new RateLimitResult() {

			@Override
			public boolean isAllowed() {
				return false;
			}

			@Override
			public List<String> policyNames() {
				return List.of(policy);
			}

			@Override
			public List<Decision> decisions() {
				return List.of(decision);
			}

			@Override
			public List<String> violatedPolicies() {
				return List.of(policy);
			}

			@Override
			public long retryAfterSeconds() {
				return 1;
			}

		};
	}
}
