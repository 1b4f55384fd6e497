package io.github.ratelimit.rulesonly;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Path rules in an application where no handler is {@code @RateLimited}: keys read the path variables
 * of the handler Spring MVC matched, requests with no handler (404, 405) spend their budget and get
 * their 429, and a servlet other than Spring MVC's is limited up front.
 */
@SpringBootTest(classes = RulesOnlyApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "rate-limit.policies.per-item.limit=2", "rate-limit.policies.per-item.period=1m",
				"rate-limit.policies.per-item.key=#{'item-' + pathVariables['id']}",
				"rate-limit.policies.scan.limit=3", "rate-limit.policies.scan.period=1m",
				"rate-limit.policies.legacy.limit=2", "rate-limit.policies.legacy.period=1m",
				"rate-limit.rules[0].path=/items/*", "rate-limit.rules[0].policies=per-item",
				"rate-limit.rules[1].path=/scan/**", "rate-limit.rules[1].policies=scan",
				"rate-limit.rules[2].path=/legacy/**", "rate-limit.rules[2].policies=legacy",
				"rate-limit.policies.every.limit=100", "rate-limit.policies.every.period=1h",
				"rate-limit.policies.every.key=global", "rate-limit.rules[3].path=/fail/**",
				"rate-limit.rules[3].policies=every", "rate-limit.policies.probe.limit=1",
				"rate-limit.policies.probe.period=1h", "rate-limit.rules[4].path=/actuator/health",
				"rate-limit.rules[4].policies=probe", "management.endpoints.web.exposure.include=health" })
class RulesOnlyTests {

	private static final HttpClient CLIENT = HttpClient.newHttpClient();

	@LocalServerPort
	int port;

	@BeforeEach
	void reset() {
		RulesOnlyApplication.legacyCalls.set(0);
	}

	@Test
	void pathRuleKeysReadTheMatchedHandlersPathVariables() {
		assertThat(send("GET", "/items/1").statusCode()).isEqualTo(200);
		assertThat(send("GET", "/items/1").statusCode()).isEqualTo(200);
		assertThat(send("GET", "/items/1").statusCode()).isEqualTo(429);
		assertThat(send("GET", "/items/2").statusCode()).as("another item, another budget").isEqualTo(200);
	}

	@Test
	void requestsWithNoHandlerSpendTheirBudgetAndGetTheir429() {
		HttpResponse<String> notFound = send("GET", "/scan/missing");
		assertThat(notFound.statusCode()).isEqualTo(404);
		assertThat(notFound.headers().firstValue("X-RateLimit-Remaining")).hasValue("2");
		HttpResponse<String> notAllowed = send("PUT", "/scan/known");
		assertThat(notAllowed.statusCode()).isEqualTo(405);
		assertThat(notAllowed.headers().firstValue("X-RateLimit-Remaining")).hasValue("1");
		assertThat(send("GET", "/scan/known").statusCode()).isEqualTo(200);
		for (String method : new String[] { "GET", "PUT", "DELETE" }) {
			HttpResponse<String> rejected = send(method, "/scan/" + (method.equals("GET") ? "missing" : "known"));
			assertThat(rejected.statusCode()).as(method).isEqualTo(429);
			assertThat(rejected.body()).contains("\"violated-policies\":[\"scan\"]");
		}
	}

	@Test
	void anotherServletIsLimitedUpFront() {
		assertThat(send("GET", "/legacy/a").body()).isEqualTo("legacy");
		assertThat(send("GET", "/legacy/b").body()).isEqualTo("legacy");
		HttpResponse<String> rejected = send("GET", "/legacy/c");
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(rejected.headers().firstValue("Retry-After")).isPresent();
		assertThat(RulesOnlyApplication.legacyCalls).as("the servlet never saw the rejected request").hasValue(2);
	}

	@Test
	void actuatorEndpointsAreLimitedByPathRulesLikeAnyHandler() {
		assertThat(send("GET", "/actuator/health").statusCode()).isEqualTo(200);
		HttpResponse<String> rejected = send("GET", "/actuator/health");
		assertThat(rejected.statusCode()).as("the actuator's handler mapping runs the interceptor too").isEqualTo(429);
		assertThat(rejected.body()).contains("\"violated-policies\":[\"probe\"]");
	}

	@Test
	void requestsAnsweredByAnErrorDispatchAreDecidedOnce() {
		HttpResponse<String> ok = send("GET", "/fail/ok");
		HttpResponse<String> sentError = send("GET", "/fail/send-error");
		HttpResponse<String> thrown = send("GET", "/fail/throw");
		HttpResponse<String> again = send("GET", "/fail/ok");
		assertThat(sentError.statusCode()).isEqualTo(400);
		assertThat(thrown.statusCode()).isEqualTo(500);
		long first = Long.parseLong(ok.headers().firstValue("X-RateLimit-Remaining").orElseThrow());
		assertThat(sentError.headers().firstValue("X-RateLimit-Remaining")).hasValue(Long.toString(first - 1));
		assertThat(thrown.headers().firstValue("X-RateLimit-Remaining")).hasValue(Long.toString(first - 2));
		assertThat(again.headers().firstValue("X-RateLimit-Remaining")).hasValue(Long.toString(first - 3));
	}

	private HttpResponse<String> send(String method, String path) {
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + path))
			.method(method, HttpRequest.BodyPublishers.noBody())
			.build();
		try {
			return CLIENT.send(request, HttpResponse.BodyHandlers.ofString());
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}
}
