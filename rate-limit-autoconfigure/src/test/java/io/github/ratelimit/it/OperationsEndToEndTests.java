package io.github.ratelimit.it;

import java.net.http.HttpResponse;
import java.util.List;

import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import io.github.ratelimit.testsupport.Http;

import static io.github.ratelimit.it.RateLimitEndToEndTests.header;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Brute-force lockout, shadow limits, metrics and the actuator endpoint, through a running server.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "management.endpoints.web.exposure.include=ratelimits,metrics" })
class OperationsEndToEndTests {

	@LocalServerPort
	int port;

	@Autowired
	MeterRegistry meters;

	Http http;

	@BeforeEach
	void client() {
		this.http = new Http(this.port);
	}

	@Test
	void wrongPasswordsLockOutOneUserOnlyAndRightOnesNeverCount() {
		for (int i = 0; i < 5; i++) {
			HttpResponse<String> right = login("carol", "right");
			assertThat(right.statusCode()).as("successes never count").isEqualTo(200);
			assertThat(header(right, "X-RateLimit-Remaining")).isEqualTo("3");
		}
		for (int i = 0; i < 3; i++) {
			HttpResponse<String> wrong = login("alice", "wrong");
			assertThat(wrong.statusCode()).isEqualTo(401);
			// counted once the 401 was known, before the response left
			assertThat(header(wrong, "X-RateLimit-Remaining")).isEqualTo(Integer.toString(2 - i));
		}
		HttpResponse<String> locked = login("alice", "right");
		assertThat(locked.statusCode()).as("locked out, even with the right password").isEqualTo(429);
		assertThat(locked.body()).contains("\"violated-policies\":[\"login\"]");
		assertThat(login("bob", "wrong").statusCode()).as("other users are unaffected").isEqualTo(401);
		assertThat(login("carol", "right").statusCode()).isEqualTo(200);
	}

	@Test
	void failuresAnsweredThroughTheErrorPageCountAndCarryTheHeaders() {
		for (String path : List.of("/ops/thrown-login", "/ops/sent-error-login", "/ops/async-thrown-login",
				"/ops/crashing-login")) {
			for (int i = 0; i < 3; i++) {
				HttpResponse<String> wrong = this.http.post(path, "user=erin&password=wrong");
				assertThat(wrong.statusCode()).as(path).isEqualTo(path.contains("crashing") ? 500 : 401);
				assertThat(header(wrong, "X-RateLimit-Remaining")).as(path).isEqualTo(Integer.toString(2 - i));
				assertThat(header(wrong, "RateLimit")).as(path).contains("r=" + (2 - i));
			}
			HttpResponse<String> locked = this.http.post(path, "user=erin&password=right");
			assertThat(locked.statusCode()).as(path).isEqualTo(429);
			assertThat(header(locked, "Retry-After")).as(path).isNotNull();
			assertThat(this.http.post(path, "user=frank&password=right").statusCode()).as(path).isEqualTo(200);
		}
	}

	@Test
	void aRedirectCountsAsASuccessAndCarriesTheHeaders() {
		for (int i = 0; i < 2; i++) {
			HttpResponse<String> redirected = this.http.get("/ops/redirected-successes");
			assertThat(redirected.statusCode()).isEqualTo(302);
			assertThat(header(redirected, "Location")).endsWith("/ops/search");
			assertThat(header(redirected, "X-RateLimit-Remaining")).isEqualTo(Integer.toString(1 - i));
		}
		assertThat(this.http.get("/ops/redirected-successes").statusCode()).isEqualTo(429);
	}

	@Test
	void asyncRequestsCountWhenTheyComplete() {
		assertThat(this.http.post("/ops/async-login", "user=dave&password=right").statusCode()).isEqualTo(200);
		assertThat(this.http.post("/ops/async-login", "user=dave&password=wrong").statusCode()).isEqualTo(401);
		assertThat(this.http.post("/ops/async-login", "user=dave&password=wrong").statusCode()).isEqualTo(401);
		assertThat(this.http.post("/ops/async-login", "user=dave&password=right").statusCode()).isEqualTo(429);
	}

	@Test
	void countSuccessesSpendsOnlyOnSuccess() {
		for (int i = 0; i < 4; i++) {
			assertThat(this.http.get("/ops/successes?ok=false").statusCode()).isEqualTo(400);
		}
		assertThat(this.http.get("/ops/successes?ok=true").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/ops/successes?ok=true").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/ops/successes?ok=false").statusCode()).isEqualTo(429);
	}

	@Test
	void aShadowPolicyDecidesAndCountsButChangesNoResponse() {
		double before = count("observed", "shadow-rejected");
		for (int i = 0; i < 5; i++) {
			HttpResponse<String> response = this.http.get("/ops/observed");
			assertThat(response.statusCode()).isEqualTo(200);
			assertThat(response.headers().firstValue("X-RateLimit-Limit")).isEmpty();
			assertThat(response.headers().firstValue("RateLimit")).isEmpty();
		}
		assertThat(count("observed", "shadow-rejected") - before).isEqualTo(3);
		assertThat(count("observed", "allowed")).isGreaterThanOrEqualTo(2);
	}

	@Test
	void shadowAndEnforcedPoliciesOnOneEndpointKeepTheirRoles() {
		for (int i = 0; i < 3; i++) {
			HttpResponse<String> response = this.http.get("/ops/observed-and-enforced");
			assertThat(response.statusCode()).isEqualTo(200);
			assertThat(header(response, "RateLimit-Policy")).as("only enforced policies show").isEqualTo("\"enforced\";q=3;w=60");
		}
		assertThat(this.http.get("/ops/observed-and-enforced").statusCode()).isEqualTo(429);
		assertThat(count("observed-wide", "shadow-rejected")).isEqualTo(2);
	}

	@Test
	void metricsCountDecisionsByPolicyAndOutcome() {
		for (int i = 0; i < 4; i++) {
			this.http.post("/t/inline", "");
			this.http.get("/algo/fixed-window");
		}
		assertThat(count("AlgorithmController.fixedWindow", "allowed")).isEqualTo(3);
		assertThat(count("AlgorithmController.fixedWindow", "rejected")).isEqualTo(1);
		assertThat(this.meters.get("ratelimit.store.latency").timer().count()).isPositive();
		assertThat(this.meters.find("ratelimit.decisions").counters())
			.allSatisfy((counter) -> assertThat(counter.getId().getTags()).extracting("key").containsOnly("policy", "outcome"));
		HttpResponse<String> metric = this.http.get("/actuator/metrics/ratelimit.decisions");
		assertThat(metric.statusCode()).isEqualTo(200);
		assertThat(metric.body()).contains("\"outcome\"").contains("shadow-rejected").doesNotContain("127.0.0.1");
	}

	@Test
	void theActuatorEndpointListsShowsAndResetsKeys() {
		HttpResponse<String> all = this.http.get("/actuator/ratelimits");
		assertThat(all.statusCode()).isEqualTo(200);
		assertThat(all.body()).contains("\"mode\":\"enforce\"")
			.contains("\"store\":\"CaffeineRateLimitStore\"")
			.contains("\"shared\":{\"name\":\"shared\",\"algorithm\":\"token-bucket\",\"limit\":3")
			.contains("\"path\":\"/r/**\"")
			.contains("io.github.ratelimit.it.OperationsController#login(String, String, long)")
			.contains("\"count\":\"failures\"");

		for (int i = 0; i < 3; i++) {
			login("erin", "wrong");
		}
		assertThat(login("erin", "right").statusCode()).isEqualTo(429);
		HttpResponse<String> state = this.http.get("/actuator/ratelimits/login/param:erin");
		assertThat(state.statusCode()).isEqualTo(200);
		assertThat(state.body()).contains("\"remaining\":0").contains("\"limit\":3");

		HttpResponse<String> unlocked = this.http.delete("/actuator/ratelimits/login/param:erin");
		assertThat(unlocked.statusCode()).isEqualTo(200);
		assertThat(unlocked.body()).contains("\"remaining\":3");
		assertThat(login("erin", "right").statusCode()).as("unlocked").isEqualTo(200);

		assertThat(this.http.get("/actuator/ratelimits/nope/ip:1.2.3.4").statusCode()).isEqualTo(404);
	}

	private HttpResponse<String> login(String user, String password) {
		return this.http.post("/ops/login", "user=" + user + "&password=" + password);
	}

	private double count(String policy, String outcome) {
		var counter = this.meters.find("ratelimit.decisions").tag("policy", policy).tag("outcome", outcome).counter();
		return (counter != null) ? counter.count() : 0;
	}
}
