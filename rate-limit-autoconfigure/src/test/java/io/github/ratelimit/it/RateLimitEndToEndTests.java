package io.github.ratelimit.it;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import io.github.ratelimit.test.ManualClock;
import io.github.ratelimit.testsupport.Http;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The starter as a user meets it: HTTP requests against a running server.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT)
class RateLimitEndToEndTests {

	@LocalServerPort
	int port;

	@Autowired
	ManualClock clock;

	Http http;

	@org.junit.jupiter.api.BeforeEach
	void client() {
		this.http = new Http(this.port);
	}

	@Test
	void inlineLimitAllowsItsBudgetThenAnswers429WithProblemDetails() {
		for (int remaining = 2; remaining >= 0; remaining--) {
			HttpResponse<String> response = this.http.get("/t/inline");
			assertThat(response.statusCode()).isEqualTo(200);
			assertThat(header(response, "X-RateLimit-Limit")).isEqualTo("3");
			assertThat(header(response, "X-RateLimit-Remaining")).isEqualTo(Integer.toString(remaining));
			assertThat(header(response, "RateLimit-Policy")).isEqualTo("\"LimitedController.inline\";q=3;w=60");
			assertThat(header(response, "RateLimit")).startsWith("\"LimitedController.inline\";r=" + remaining + ";t=");
		}
		HttpResponse<String> rejected = this.http.get("/t/inline");
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(header(rejected, "Retry-After")).isEqualTo("20");
		assertThat(header(rejected, "X-RateLimit-Remaining")).isEqualTo("0");
		assertThat(header(rejected, "X-RateLimit-Reset")).isEqualTo("60");
		assertThat(header(rejected, "RateLimit")).as("the next token, not the whole quota").isEqualTo("\"LimitedController.inline\";r=0;t=20");
		assertThat(header(rejected, "Content-Type")).isEqualTo("application/problem+json");
		assertThat(header(rejected, "Cache-Control")).isEqualTo("no-store");
		assertThat(rejected.body()).isEqualTo("{\"type\":\"https://iana.org/assignments/http-problem-types#quota-exceeded\","
				+ "\"title\":\"Too Many Requests\",\"status\":429,"
				+ "\"detail\":\"Rate limit exceeded for 'LimitedController.inline'; retry after 20 seconds.\","
				+ "\"instance\":\"/t/inline\",\"violated-policies\":[\"LimitedController.inline\"]}");
	}

	@Test
	void aRetryAfterRetryAfterSecondsSucceeds() {
		assertThat(this.http.get("/t/retry").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/t/retry").statusCode()).isEqualTo(200);
		this.clock.advance(Duration.ofMillis(2300));
		HttpResponse<String> rejected = this.http.get("/t/retry");
		assertThat(rejected.statusCode()).isEqualTo(429);
		// 5 s per token, 2.3 s of it passed: 2.7 s left, sent rounded up.
		assertThat(header(rejected, "Retry-After")).isEqualTo("3");
		this.clock.advance(Duration.ofSeconds(3));
		assertThat(this.http.get("/t/retry").statusCode()).isEqualTo(200);
	}

	@Test
	void resolutionIsExactPerHttpMethod() {
		for (int i = 0; i < 5; i++) {
			assertThat(this.http.post("/t/inline", "").statusCode()).isEqualTo(200);
		}
	}

	@Test
	void resolutionIsExactPerProducedMediaType() {
		assertThat(this.http.get("/t/negotiated", "Accept", "application/json").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/t/negotiated", "Accept", "application/json").statusCode()).isEqualTo(429);
		HttpResponse<String> text = this.http.get("/t/negotiated", "Accept", "text/plain");
		assertThat(text.statusCode()).isEqualTo(200);
		assertThat(text.headers().firstValue("X-RateLimit-Limit")).isEmpty();
	}

	@Test
	void pathVariablesFeedSpelKeys() {
		assertThat(this.http.get("/t/items/1").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/t/items/1").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/t/items/1").statusCode()).isEqualTo(429);
		assertThat(this.http.get("/t/items/2").statusCode()).isEqualTo(200);
	}

	@Test
	void theProblemInstanceIsThePathAsTheClientSentIt() {
		assertThat(this.http.get("/t/items/%39%39").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/t/items/99").statusCode()).isEqualTo(200);
		HttpResponse<String> rejected = this.http.get("/t/items/%39%39");
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(rejected.body()).contains("\"instance\":\"/t/items/%39%39\"");
	}

	@Test
	void corsPreflightsSpendNoBudgetAndRejectionsCarryTheApplicationsCorsHeaders() {
		for (String path : new String[] { "/cors/rule", "/t/cors" }) {
			for (int i = 0; i < 5; i++) {
				HttpResponse<String> preflight = this.http.options(path, "Origin", "https://app.example",
						"Access-Control-Request-Method", "POST");
				assertThat(preflight.statusCode()).as(path).isEqualTo(200);
				assertThat(header(preflight, "Access-Control-Allow-Origin")).isEqualTo("https://app.example");
				assertThat(preflight.headers().firstValue("X-RateLimit-Limit")).as(path).isEmpty();
			}
			HttpResponse<String> first = this.http.post(path, "", "Origin", "https://app.example");
			assertThat(first.statusCode()).as(path).isEqualTo(200);
			assertThat(header(first, "X-RateLimit-Remaining")).as(path).isEqualTo("1");
			assertThat(this.http.post(path, "", "Origin", "https://app.example").statusCode()).isEqualTo(200);
			// The application's CORS policy answers the rejection too: a page on that origin reads it.
			HttpResponse<String> rejected = this.http.post(path, "", "Origin", "https://app.example");
			assertThat(rejected.statusCode()).isEqualTo(429);
			assertThat(header(rejected, "Access-Control-Allow-Origin")).as(path).isEqualTo("https://app.example");
			assertThat(header(rejected, "Access-Control-Expose-Headers")).as(path)
				.isEqualTo("RateLimit, RateLimit-Policy, Retry-After");
			assertThat(header(rejected, "Retry-After")).as(path).isNotNull();
		}
	}

	@Test
	void aNamedPolicyIsOneBudgetForEveryEndpointThatNamesIt() {
		assertThat(this.http.get("/t/named-a").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/t/named-b").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/t/named-a").statusCode()).isEqualTo(200);
		HttpResponse<String> rejected = this.http.get("/t/named-b");
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(rejected.body()).contains("\"violated-policies\":[\"shared\"]");
		assertThat(header(rejected, "RateLimit-Policy")).isEqualTo("\"shared\";q=3;w=60");
	}

	@Test
	void sameMethodNameInAnotherControllerHasItsOwnBudget() {
		assertThat(this.http.get("/t/list").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/t/list").statusCode()).isEqualTo(429);
		assertThat(this.http.get("/o/list").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/o/list").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/o/list").statusCode()).isEqualTo(429);
	}

	@Test
	void classLevelAnnotationGivesEachHandlerItsOwnBudget() {
		assertThat(this.http.get("/o/second").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/o/second").statusCode()).isEqualTo(200);
		HttpResponse<String> rejected = this.http.get("/o/second");
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(rejected.body()).contains("\"violated-policies\":[\"OtherController.second\"]");
	}

	@Test
	void userKeysFollowTheAuthenticatedPrincipal() {
		String alice = basic("alice");
		assertThat(this.http.get("/t/user", "Authorization", alice).statusCode()).isEqualTo(200);
		assertThat(this.http.get("/t/user", "Authorization", alice).statusCode()).isEqualTo(200);
		assertThat(this.http.get("/t/user", "Authorization", alice).statusCode()).isEqualTo(429);
		assertThat(this.http.get("/t/user", "Authorization", basic("bob")).statusCode()).isEqualTo(200);
		// Anonymous requests fall back to the client IP: a budget of their own.
		assertThat(this.http.get("/t/user").statusCode()).isEqualTo(200);
	}

	@Test
	void headerKeysFallBackToTheClientIpWhenTheHeaderIsMissing() {
		assertThat(this.http.get("/t/header", "X-Api-Key", "k1").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/t/header", "X-Api-Key", "k1").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/t/header", "X-Api-Key", "k1").statusCode()).isEqualTo(429);
		assertThat(this.http.get("/t/header", "X-Api-Key", "k2").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/t/header").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/t/header").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/t/header").statusCode()).isEqualTo(429);
		// A header value that equals the client IP does not share the fallback budget.
		assertThat(this.http.get("/t/header", "X-Api-Key", "127.0.0.1").statusCode()).isEqualTo(200);
	}

	@Test
	void paramKeysReadQueryAndFormParameters() {
		assertThat(this.http.get("/t/param?name=x").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/t/param?name=x").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/t/param?name=x").statusCode()).isEqualTo(429);
		assertThat(this.http.get("/t/param?name=y").statusCode()).isEqualTo(200);
	}

	@Test
	void globalKeyIsOneBudgetForEverybody() {
		assertThat(this.http.get("/t/global", "X-Forwarded-For", "1.1.1.1").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/t/global", "Authorization", basic("alice")).statusCode()).isEqualTo(200);
		assertThat(this.http.get("/t/global").statusCode()).isEqualTo(429);
	}

	@Test
	void beanKeysUseTheUsersResolver() {
		assertThat(this.http.get("/t/bean", "X-Tenant", "acme").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/t/bean", "X-Tenant", "acme").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/t/bean", "X-Tenant", "acme").statusCode()).isEqualTo(429);
		assertThat(this.http.get("/t/bean", "X-Tenant", "globex").statusCode()).isEqualTo(200);
	}

	@Test
	void everyLimitMustAllowAndARejectionConsumesNothingFromTheOthers() {
		HttpResponse<String> first = this.http.get("/t/multi");
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(header(first, "RateLimit-Policy")).isEqualTo("\"wide\";q=5;w=60, \"narrow\";q=2;w=10");
		assertThat(header(first, "RateLimit")).isEqualTo("\"wide\";r=4;t=12, \"narrow\";r=1;t=5");
		assertThat(this.http.get("/t/multi").statusCode()).isEqualTo(200);
		for (int i = 0; i < 5; i++) {
			HttpResponse<String> rejected = this.http.get("/t/multi");
			assertThat(rejected.statusCode()).isEqualTo(429);
			assertThat(rejected.body()).contains("\"violated-policies\":[\"narrow\"]");
			// "wide" was asked and gave its token back: still 3 left.
			assertThat(header(rejected, "RateLimit")).startsWith("\"wide\";r=3;");
			// The legacy headers describe the limit that rejected.
			assertThat(header(rejected, "X-RateLimit-Limit")).isEqualTo("2");
		}
		for (int i = 0; i < 2; i++) {
			this.clock.advance(Duration.ofSeconds(10));
			assertThat(this.http.get("/t/multi").statusCode()).isEqualTo(200);
			assertThat(this.http.get("/t/multi").statusCode()).isEqualTo(200);
		}
		this.clock.advance(Duration.ofSeconds(10));
		assertThat(this.http.get("/t/multi").statusCode()).isEqualTo(200);
		HttpResponse<String> wideExhausted = this.http.get("/t/multi");
		assertThat(wideExhausted.statusCode()).isEqualTo(429);
		assertThat(wideExhausted.body()).contains("\"violated-policies\":[\"wide\"]");
		// "narrow" gave its token back: it still has one.
		assertThat(header(wideExhausted, "RateLimit")).endsWith("\"narrow\";r=1;t=5");
	}

	@Test
	void costTakesSeveralTokens() {
		HttpResponse<String> first = this.http.get("/t/expensive");
		assertThat(header(first, "X-RateLimit-Remaining")).isEqualTo("6");
		assertThat(header(this.http.get("/t/expensive"), "X-RateLimit-Remaining")).isEqualTo("2");
		HttpResponse<String> rejected = this.http.get("/t/expensive");
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(header(rejected, "X-RateLimit-Remaining")).isEqualTo("2");
		// two more tokens needed, at 6 s each
		assertThat(header(rejected, "Retry-After")).isEqualTo("12");
	}

	@Test
	void annotationCostSpendsMoreOfASharedPolicy() {
		assertThat(header(this.http.get("/t/expensive-shared"), "X-RateLimit-Remaining")).isEqualTo("3");
		assertThat(header(this.http.get("/t/cheap-shared"), "X-RateLimit-Remaining")).isEqualTo("2");
		assertThat(this.http.get("/t/expensive-shared").statusCode()).isEqualTo(429);
		assertThat(this.http.get("/t/cheap-shared").statusCode()).isEqualTo(200);
	}

	@Test
	void pathRulesLimitByPatternAndMethod() {
		for (int i = 0; i < 4; i++) {
			assertThat(this.http.get("/r/hello").statusCode()).isEqualTo(200);
		}
		HttpResponse<String> rejected = this.http.get("/r/hello");
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(rejected.body()).contains("\"violated-policies\":[\"rule-api\"]");
		// the rule lists GET only, which covers HEAD (served by the GET handler)
		assertThat(this.http.post("/r/hello", "").statusCode()).isEqualTo(200);
		assertThat(this.http.head("/r/hello").statusCode()).isEqualTo(429);
		// rules match paths without a handler too: the 404 still counts
		assertThat(this.http.get("/r/missing").statusCode()).isEqualTo(429);
	}

	@Test
	void aPolicyNamedByARuleAndAnAnnotationCountsOnce() {
		for (int i = 3; i >= 0; i--) {
			HttpResponse<String> response = this.http.get("/t/ruled");
			assertThat(response.statusCode()).isEqualTo(200);
			assertThat(header(response, "X-RateLimit-Remaining")).isEqualTo(Integer.toString(i));
			assertThat(header(response, "RateLimit-Policy")).isEqualTo("\"ruled\";q=4;w=60");
		}
		assertThat(this.http.get("/t/ruled").statusCode()).isEqualTo(429);
	}

	@Test
	void unlimitedEndpointsCarryNoHeaders() {
		for (int i = 0; i < 20; i++) {
			HttpResponse<String> response = this.http.get("/free");
			assertThat(response.statusCode()).isEqualTo(200);
			assertThat(response.headers().firstValue("X-RateLimit-Limit")).isEmpty();
			assertThat(response.headers().firstValue("RateLimit")).isEmpty();
		}
	}

	@Test
	void asyncRequestsAndErrorDispatchesAreCountedOnce() {
		HttpResponse<String> async = this.http.get("/t/async");
		assertThat(async.statusCode()).isEqualTo(200);
		assertThat(async.body()).isEqualTo("async");
		assertThat(header(async, "X-RateLimit-Remaining")).isEqualTo("1");
		assertThat(this.http.get("/t/async").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/t/async").statusCode()).isEqualTo(429);

		HttpResponse<String> failed = this.http.get("/t/fails");
		assertThat(failed.statusCode()).isEqualTo(500);
		assertThat(header(failed, "X-RateLimit-Remaining")).isEqualTo("1");
		assertThat(this.http.get("/t/fails").statusCode()).isEqualTo(500);
		assertThat(this.http.get("/t/fails").statusCode()).isEqualTo(429);
	}

	@Test
	void concurrentRequestsOnOneKeyAdmitExactlyTheBudget() throws Exception {
		ExecutorService pool = Executors.newFixedThreadPool(16);
		try {
			List<Future<Integer>> statuses = new ArrayList<>();
			for (int i = 0; i < 300; i++) {
				Callable<Integer> call = () -> this.http.get("/t/concurrent").statusCode();
				statuses.add(pool.submit(call));
			}
			int ok = 0;
			int rejected = 0;
			for (Future<Integer> status : statuses) {
				int code = status.get();
				if (code == 200) {
					ok++;
				}
				else if (code == 429) {
					rejected++;
				}
			}
			assertThat(ok).isEqualTo(200);
			assertThat(rejected).isEqualTo(100);
		}
		finally {
			pool.shutdownNow();
		}
	}

	static String header(HttpResponse<String> response, String name) {
		return response.headers().firstValue(name).orElseThrow(() -> new AssertionError("no " + name + " header"));
	}

	static String basic(String user) {
		return "Basic " + Base64.getEncoder().encodeToString((user + ":secret").getBytes());
	}
}
