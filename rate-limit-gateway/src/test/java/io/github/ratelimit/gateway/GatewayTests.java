package io.github.ratelimit.gateway;

import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Map;

import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.cloud.gateway.event.FilterArgsEvent;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.github.ratelimit.testsupport.Backend;
import io.github.ratelimit.testsupport.Http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A real gateway on Netty proxying to a real backend, its routes in {@code application.yml}: each route's
 * {@code RateLimited} policies, with the path rules, decided once; failures counted on the backend's answer;
 * forms read by a {@code param:} key forwarded byte for byte.
 */
@SpringBootTest(classes = GatewayApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT)
class GatewayTests {

	static final Backend backend = Backend.start();

	@LocalServerPort
	int port;

	@Autowired
	MeterRegistry meters;

	Http http;

	@DynamicPropertySource
	static void backend(DynamicPropertyRegistry registry) {
		registry.add("backend.uri", backend::uri);
	}

	@AfterAll
	static void stop() {
		backend.close();
	}

	@BeforeEach
	void client() {
		this.http = new Http(this.port);
	}

	@Test
	void aRoutesPolicyLimitsItsRequestsOnceThoughARuleNamesItToo() {
		int before = backend.hits("/api/hello");
		for (int remaining = 2; remaining >= 0; remaining--) {
			HttpResponse<String> allowed = this.http.get("/api/hello");
			assertThat(allowed.statusCode()).isEqualTo(200);
			assertThat(allowed.body()).isEqualTo("/api/hello");
			assertThat(allowed.headers().firstValue("X-RateLimit-Limit")).hasValue("3");
			assertThat(allowed.headers().firstValue("X-RateLimit-Remaining")).hasValue(Integer.toString(remaining));
		}
		HttpResponse<String> rejected = this.http.get("/api/hello");
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(rejected.headers().firstValue("Retry-After")).isPresent();
		assertThat(rejected.headers().firstValue("RateLimit-Policy")).hasValueSatisfying(
				(policy) -> assertThat(policy).contains("\"hello\";q=3;w=60"));
		assertThat(rejected.body()).contains("\"violated-policies\":[\"hello\"]");
		assertThat(backend.hits("/api/hello") - before).as("the rejected request never reached the backend").isEqualTo(3);
	}

	@Test
	void behindATrustedProxyEachClientHasItsBudgetAndAForgedHopGetsNoSecond() {
		for (int i = 0; i < 3; i++) {
			assertThat(this.http.get("/api/hello", "X-Forwarded-For", "203.0.113.7").statusCode()).isEqualTo(200);
		}
		assertThat(this.http.get("/api/hello", "X-Forwarded-For", "203.0.113.7").statusCode()).isEqualTo(429);
		assertThat(this.http.get("/api/hello", "X-Forwarded-For", "198.51.100.1, 203.0.113.7").statusCode())
			.as("a hop the client wrote itself, left of the proxy's").isEqualTo(429);
		assertThat(this.http.get("/api/hello", "X-Forwarded-For", "junk, 203.0.113.7").statusCode())
			.as("junk, never a 500 nor a second budget").isEqualTo(429);
		assertThat(this.http.get("/api/hello", "X-Forwarded-For", "203.0.113.8").statusCode())
			.as("another client behind the proxy").isEqualTo(200);
	}

	@Test
	void aRouteNamingTwoPoliciesSpendsBothAllOrNothing() {
		int before = backend.hits("/api/two");
		assertThat(this.http.get("/api/two").statusCode()).isEqualTo(200);
		HttpResponse<String> second = this.http.get("/api/two");
		assertThat(second.statusCode()).isEqualTo(200);
		assertThat(second.headers().allValues("RateLimit")).hasSize(1).first().asString()
			.contains("\"small\";r=0").contains("\"large\";r=3");
		HttpResponse<String> third = this.http.get("/api/two");
		assertThat(third.statusCode()).isEqualTo(429);
		assertThat(third.body()).contains("\"violated-policies\":[\"small\"]");
		assertThat(third.headers().allValues("RateLimit")).first().asString().as("the refused request spent nothing")
			.contains("\"large\";r=3");
		assertThat(backend.hits("/api/two") - before).isEqualTo(2);
	}

	@Test
	void failedLoginsAreCountedPerUsernameFromTheFormTheBackendStillReceivesWhole() {
		String form = "username=alice&password=wrong&note=caf%C3%A9+%26+more";
		for (int i = 0; i < 3; i++) {
			assertThat(this.http.post("/api/login", form).statusCode()).isEqualTo(401);
		}
		assertThat(new String(backend.bodies().get(backend.bodies().size() - 1), StandardCharsets.UTF_8))
			.as("byte for byte").isEqualTo(form);
		HttpResponse<String> locked = this.http.post("/api/login", "username=alice&password=right");
		assertThat(locked.statusCode()).as("alice is locked out").isEqualTo(429);
		assertThat(this.http.post("/api/login", "username=bob&password=right").statusCode()).as("bob is not")
			.isEqualTo(200);
		for (int i = 0; i < 5; i++) {
			assertThat(this.http.post("/api/login", "username=carol&password=right").statusCode())
				.as("successes are not counted").isEqualTo(200);
		}
	}

	@Test
	void aFormOverTheBoundIsRefusedNeverKeyedElsewhere() {
		String form = "username=dave&password=wrong&pad=" + "x".repeat(300 * 1024);
		HttpResponse<String> refused = this.http.post("/api/login", form);
		assertThat(refused.statusCode()).isEqualTo(413);
		assertThat(backend.bodies().stream().noneMatch((body) -> body.length > 256 * 1024)).isTrue();
	}

	@Test
	void theBackendsAnswersCountAsFailuresNoAnswerDoesNot() {
		for (int i = 0; i < 5; i++) {
			assertThat(this.http.get("/down/anything", "X-Client", "ann").statusCode())
				.as("the gateway's own, no backend").isGreaterThanOrEqualTo(500);
		}
		assertThat(this.http.get("/api/status/404", "X-Client", "ann").statusCode()).isEqualTo(404);
		assertThat(this.http.get("/api/status/500", "X-Client", "ann").statusCode()).as("the backend's 500, an answer")
			.isEqualTo(500);
		HttpResponse<String> locked = this.http.get("/api/status/200", "X-Client", "ann");
		assertThat(locked.statusCode()).as("two failures spent the budget").isEqualTo(429);
		assertThat(locked.body()).contains("\"violated-policies\":[\"failures\"]");

		assertThat(this.http.get("/api/status/429", "X-Client", "ben").statusCode()).as("the backend's own 429")
			.isEqualTo(429);
		assertThat(this.http.get("/api/status/401", "X-Client", "ben").statusCode()).isEqualTo(401);
		assertThat(this.http.get("/api/status/200", "X-Client", "ben").body()).as("the 429 was counted")
			.contains("\"violated-policies\":[\"failures\"]");
	}

	@Test
	void anEmptyFormPostIsAnEmptyFormAndReachesTheBackend() {
		HttpResponse<String> empty = this.http.post("/api/login", "");
		assertThat(empty.statusCode()).as("answered, not left hanging: no username cannot be keyed (400), or the backend's 401")
			.isIn(400, 401);
	}

	@Test
	void aRetriedRequestIsDecidedOnceAndCountedOnItsFinalResponse() {
		int before = backend.hits("/api/flaky");
		HttpResponse<String> retried = this.http.get("/api/flaky");
		assertThat(retried.statusCode()).as("503, retried, then 200").isEqualTo(200);
		assertThat(backend.hits("/api/flaky") - before).isEqualTo(2);
		assertThat(retried.headers().firstValue("RateLimit")).hasValueSatisfying((header) -> assertThat(header)
			.contains("\"retried\";r=4").contains("\"retried-failures\";r=2"));
	}

	@Test
	void requestRateLimiterWithTheApplicationsKeyResolverSpendsThePolicysBudget() {
		for (int remaining = 1; remaining >= 0; remaining--) {
			HttpResponse<String> allowed = this.http.get("/api/keyed", "X-Api-Key", "k1");
			assertThat(allowed.statusCode()).isEqualTo(200);
			assertThat(allowed.headers().firstValue("X-RateLimit-Remaining")).hasValue(Integer.toString(remaining));
			assertThat(allowed.headers().firstValue("RateLimit-Policy")).hasValueSatisfying(
					(policy) -> assertThat(policy).contains("\"keyed\";q=2;w=60"));
		}
		HttpResponse<String> rejected = this.http.get("/api/keyed", "X-Api-Key", "k1");
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(rejected.headers().firstValue("Retry-After")).isPresent();
		assertThat(this.http.get("/api/keyed", "X-Api-Key", "k2").statusCode()).as("another key's budget")
			.isEqualTo(200);
		assertThat(this.meters.get("ratelimit.decisions").tag("policy", "keyed").tag("outcome", "rejected").counter()
			.count()).as("metrics as for a request the filter decides").isEqualTo(1);
		assertThat(backend.hits("/api/keyed")).isEqualTo(3);
	}

	@Test
	void aRateLimiterRouteNamingWhatARateLimiterCannotDoFailsAsItIsDefined(@Autowired PolicyRateLimiter limiter) {
		assertThatThrownBy(() -> limiter.onApplicationEvent(
				new FilterArgsEvent(this, "guesses", Map.of("rate-limited.policy", "login"))))
			.hasMessageContaining("route guesses: RequestRateLimiter rate-limited.policy")
			.hasMessageContaining("policy 'login' counts responses")
			.hasMessageContaining("RateLimited=login");
		assertThatThrownBy(() -> limiter.onApplicationEvent(
				new FilterArgsEvent(this, "typo", Map.of("rate-limited.policy", "kyed"))))
			.hasMessageContaining("no policy named 'kyed'");
		assertThatThrownBy(() -> limiter.isAllowed("hello", "k").block()).as("a route that chose no policy")
			.hasMessageContaining("names no policy");
	}

	@Test
	void aRouteWithoutTheFilterIsNotLimited() {
		for (int i = 0; i < 10; i++) {
			HttpResponse<String> open = this.http.get("/open/api/ping");
			assertThat(open.statusCode()).isEqualTo(200);
			assertThat(open.body()).isEqualTo("/api/ping");
			assertThat(open.headers().firstValue("X-RateLimit-Limit")).isEmpty();
		}
	}

}
