package io.github.ratelimit.it;

import java.net.http.HttpResponse;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import io.github.ratelimit.testsupport.Http;

import static io.github.ratelimit.it.RateLimitEndToEndTests.header;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Ahead of Spring Security, path rules are decided in the filter and a handler's own limits at the
 * handler: both count, once each, and answer with one set of headers.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "rate-limit.filter-order=-110", "rate-limit.rules[0].path=/t/inline",
				"rate-limit.rules[0].policies=paths", "rate-limit.policies.paths.limit=5",
				"rate-limit.policies.paths.period=1m", "rate-limit.rules[1].path=/t/named-a",
				"rate-limit.rules[1].policies=shared" })
class RulesAndHandlerBeforeSpringSecurityTests {

	@LocalServerPort
	int port;

	Http http;

	@BeforeEach
	void client() {
		this.http = new Http(this.port);
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

	@Test
	void aPolicyARuleAndTheHandlerBothNameCountsOnce() {
		// /t/named-a: @RateLimited("shared"), 3 a minute, and a rule naming "shared" too.
		for (int i = 0; i < 3; i++) {
			HttpResponse<String> allowed = this.http.get("/t/named-a");
			assertThat(allowed.statusCode()).isEqualTo(200);
			assertThat(header(allowed, "RateLimit")).isEqualTo("\"shared\";r=" + (2 - i) + ";t=20");
		}
		assertThat(this.http.get("/t/named-a").statusCode()).isEqualTo(429);
	}

}
