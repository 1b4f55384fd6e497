package io.github.ratelimit.gateway.mvc;

import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.github.ratelimit.testsupport.Backend;
import io.github.ratelimit.testsupport.Http;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A real Spring Cloud Gateway Server MVC on Tomcat proxying to a real backend, its routes in
 * {@code application.yml}: each route's {@code RateLimited} policies, with the path rules, each budget once, all
 * or nothing; failed logins counted per username read from the form the gateway's {@code FormFilter} hides from
 * the handler; a backend that never answered is no failure.
 */
@SpringBootTest(classes = MvcGatewayApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT)
class MvcGatewayTests {

	static final Backend backend = Backend.start();

	@LocalServerPort
	int port;

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
			assertThat(allowed.headers().firstValue("X-RateLimit-Remaining")).hasValue(Integer.toString(remaining));
		}
		HttpResponse<String> rejected = this.http.get("/api/hello");
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(rejected.headers().firstValue("Retry-After")).isPresent();
		assertThat(rejected.body()).contains("\"violated-policies\":[\"hello\"]");
		assertThat(backend.hits("/api/hello") - before).isEqualTo(3);
	}

	@Test
	void aRouteNamingTwoPoliciesSpendsBothAllOrNothing() {
		int before = backend.hits("/api/two");
		assertThat(this.http.get("/api/two").statusCode()).isEqualTo(200);
		HttpResponse<String> second = this.http.get("/api/two");
		assertThat(second.headers().allValues("RateLimit")).hasSize(1).first().asString()
			.contains("\"small\";r=0").contains("\"large\";r=3");
		HttpResponse<String> third = this.http.get("/api/two");
		assertThat(third.statusCode()).isEqualTo(429);
		assertThat(third.headers().allValues("RateLimit")).first().asString().as("the refused request spent nothing")
			.contains("\"large\";r=3");
		assertThat(backend.hits("/api/two") - before).isEqualTo(2);
		// The path rule's unit the refused request took was given back: one is left for /api/twomore.
		assertThat(this.http.get("/api/twomore").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/api/twomore").statusCode()).isEqualTo(429);
	}

	@Test
	void failedLoginsAreCountedPerUsernameFromTheFormTheGatewayForwards() {
		for (int i = 0; i < 3; i++) {
			assertThat(this.http.post("/api/login", "username=alice&password=wrong").statusCode()).isEqualTo(401);
		}
		assertThat(new String(backend.bodies().get(backend.bodies().size() - 1), StandardCharsets.UTF_8))
			.contains("username=alice").contains("password=wrong");
		assertThat(this.http.post("/api/login", "username=alice&password=right").statusCode())
			.as("alice is locked out").isEqualTo(429);
		assertThat(this.http.post("/api/login", "username=bob&password=right").statusCode()).as("bob is not")
			.isEqualTo(200);
	}

	@Test
	void theBackendsAnswersCountAsFailuresNoAnswerDoesNot() {
		for (int i = 0; i < 4; i++) {
			assertThat(this.http.get("/down/anything", "X-Client", "ann").statusCode())
				.as("the gateway's own, no backend").isGreaterThanOrEqualTo(500);
		}
		assertThat(this.http.get("/api/status/404", "X-Client", "ann").statusCode()).isEqualTo(404);
		assertThat(this.http.get("/api/status/500", "X-Client", "ann").statusCode()).isEqualTo(500);
		HttpResponse<String> locked = this.http.get("/api/status/200", "X-Client", "ann");
		assertThat(locked.statusCode()).as("two failures spent the budget").isEqualTo(429);
	}

	@Test
	void aRouteWithoutTheFilterIsNotLimited() {
		for (int i = 0; i < 6; i++) {
			HttpResponse<String> open = this.http.get("/open/api/ping");
			assertThat(open.statusCode()).isEqualTo(200);
			assertThat(open.headers().firstValue("X-RateLimit-Limit")).isEmpty();
		}
	}

}
