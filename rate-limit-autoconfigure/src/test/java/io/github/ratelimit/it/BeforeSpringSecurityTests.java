package io.github.ratelimit.it;

import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;

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
		properties = { "rate-limit.filter-order=-110", "rate-limit.rules[0].path=/**",
				"rate-limit.rules[0].policies=guesses", "rate-limit.policies.guesses.limit=3",
				"rate-limit.policies.guesses.period=1m", "rate-limit.policies.guesses.count=failures" })
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
		// HTTP basic checks a password on any path, and on an OPTIONS that looks like a preflight but carries
		// credentials (a browser's never does): the guesses go wherever.
		HttpResponse<String> first = this.http.get("/r/hello", "Authorization", basic("alice", "guess1"));
		HttpResponse<String> second = this.http.get("/no/such/page", "Authorization", basic("alice", "guess2"));
		HttpResponse<String> third = this.http.options("/t/cors", "Origin", "https://app.example",
				"Access-Control-Request-Method", "POST", "Authorization", basic("alice", "guess3"));
		int remaining = 2;
		for (HttpResponse<String> wrong : List.of(first, second, third)) {
			assertThat(wrong.statusCode()).isEqualTo(401);
			assertThat(header(wrong, "X-RateLimit-Remaining")).isEqualTo(Integer.toString(remaining--));
		}
		for (String password : new String[] { "guess4", "secret" }) {
			HttpResponse<String> refused = this.http.get("/r/hello", "Authorization", basic("alice", password));
			assertThat(refused.statusCode()).as("the same answer, right password or not").isEqualTo(429);
			assertThat(refused.body()).contains("\"violated-policies\":[\"guesses\"]");
			assertThat(header(refused, "Retry-After")).isNotNull();
		}
		assertThat(this.http.options("/t/cors", "Origin", "https://app.example", "Access-Control-Request-Method", "POST",
				"Authorization", basic("alice", "secret")).statusCode()).isEqualTo(429);
		assertThat(this.http.get("/free", "Authorization", basic("alice", "secret")).statusCode()).isEqualTo(429);
	}

	static String basic(String user, String password) {
		return "Basic " + Base64.getEncoder().encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
	}

}
