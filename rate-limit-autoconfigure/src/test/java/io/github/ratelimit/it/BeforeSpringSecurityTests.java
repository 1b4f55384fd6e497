package io.github.ratelimit.it;

import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import io.github.ratelimit.testsupport.Http;

import static io.github.ratelimit.it.RateLimitEndToEndTests.header;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The filter ahead of Spring Security ({@code filter-order} below {@code -100}), as the docs advise to
 * guard Security's own authentication: HTTP basic here, which answers a wrong password inside
 * Security's filters, before any handler lookup.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "rate-limit.filter-order=-110", "rate-limit.rules[0].path=/r/**",
				"rate-limit.rules[0].policies=guesses", "rate-limit.policies.guesses.limit=3",
				"rate-limit.policies.guesses.period=1m", "rate-limit.policies.guesses.count=failures",
				"rate-limit.rules[1].path=/t/inline", "rate-limit.rules[1].policies=paths",
				"rate-limit.policies.paths.limit=5", "rate-limit.policies.paths.period=1m" })
class BeforeSpringSecurityTests {

	@LocalServerPort
	int port;

	Http http;

	@BeforeEach
	void client() {
		this.http = new Http(this.port);
	}

	@Test
	void aClientOutOfGuessesIsAnsweredBeforeSpringSecurityChecksItsPassword() {
		for (int i = 0; i < 3; i++) {
			assertThat(this.http.get("/r/hello", "Authorization", basic("alice", "secret")).statusCode())
				.as("a right password is no failure").isEqualTo(200);
		}
		for (int i = 0; i < 3; i++) {
			HttpResponse<String> wrong = this.http.get("/r/hello", "Authorization", basic("alice", "guess" + i));
			assertThat(wrong.statusCode()).isEqualTo(401);
			assertThat(header(wrong, "X-RateLimit-Remaining")).isEqualTo(Integer.toString(2 - i));
		}
		for (String password : new String[] { "guess3", "secret" }) {
			HttpResponse<String> refused = this.http.get("/r/hello", "Authorization", basic("alice", password));
			assertThat(refused.statusCode()).as("the same answer, right password or not").isEqualTo(429);
			assertThat(refused.body()).contains("\"violated-policies\":[\"guesses\"]");
			assertThat(header(refused, "Retry-After")).isNotNull();
		}
	}

	@Test
	void aRuleDecidedUpFrontAndTheHandlersOwnLimitBothCountAndBothAreInTheHeaders() {
		// /t/inline: the rule's 5 a minute, decided before Spring Security, and its @RateLimited 3 a
		// minute, decided at the handler.
		for (int i = 0; i < 3; i++) {
			HttpResponse<String> allowed = this.http.get("/t/inline");
			assertThat(allowed.statusCode()).isEqualTo(200);
			assertThat(header(allowed, "RateLimit")).contains("\"paths\";r=" + (4 - i))
				.contains("\"LimitedController.inline\";r=" + (2 - i));
		}
		HttpResponse<String> refused = this.http.get("/t/inline");
		assertThat(refused.statusCode()).isEqualTo(429);
		assertThat(refused.body()).contains("\"violated-policies\":[\"LimitedController.inline\"]");
		// The rule's budget was spent before the handler's refused: 4 of 5 are gone, one left.
		HttpResponse<String> last = this.http.get("/t/inline");
		assertThat(last.body()).contains("\"violated-policies\":[\"LimitedController.inline\"]");
		assertThat(this.http.get("/t/inline").body()).contains("\"violated-policies\":[\"paths\"]");
	}

	private static String basic(String user, String password) {
		return "Basic " + Base64.getEncoder().encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
	}

}
