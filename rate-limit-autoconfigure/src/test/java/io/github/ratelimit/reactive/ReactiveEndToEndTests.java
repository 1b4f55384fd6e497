package io.github.ratelimit.reactive;

import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import io.github.ratelimit.testsupport.AtOnce;
import io.github.ratelimit.testsupport.Http;
import io.github.ratelimit.testsupport.NonBlocking;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The starter on a WebFlux application, through a running Netty server: the same contract as on Spring MVC,
 * from the outside.
 */
@SpringBootTest(classes = ReactiveApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive", "spring.http.codecs.max-in-memory-size=1KB",
				"rate-limit.policies.api.limit=3", "rate-limit.policies.api.period=1m",
				"rate-limit.policies.per-report.limit=2", "rate-limit.policies.per-report.period=1m",
				"rate-limit.policies.per-report.key=#{pathVariables['id']}",
				"rate-limit.policies.login.limit=3", "rate-limit.policies.login.period=15m",
				"rate-limit.policies.login.key=param:username", "rate-limit.policies.login.count=failures",
				"rate-limit.policies.functions.limit=2", "rate-limit.policies.functions.period=1m",
				"rate-limit.policies.slots.algorithm=concurrency", "rate-limit.policies.slots.limit=2",
				"rate-limit.policies.slots.key=global",
				"rate-limit.policies.many.limit=20", "rate-limit.policies.many.period=1h",
				"rate-limit.policies.smooth.limit=4", "rate-limit.policies.smooth.period=1s",
				"rate-limit.policies.smooth.burst=1", "rate-limit.policies.smooth.on-limit=delay",
				"rate-limit.policies.smooth.max-delay=5s",
				"rate-limit.rules[0].path=/api/**", "rate-limit.rules[0].policies=api",
				"rate-limit.rules[1].path=/login", "rate-limit.rules[1].policies=login",
				"rate-limit.rules[2].path=/fn/**", "rate-limit.rules[2].policies=functions",
				"rate-limit.rules[3].path=/work", "rate-limit.rules[3].policies=slots",
				"rate-limit.rules[4].path=/smooth", "rate-limit.rules[4].policies=smooth",
				"rate-limit.rules[5].path=/many", "rate-limit.rules[5].policies=many",
				"rate-limit.policies.per-user.limit=2", "rate-limit.policies.per-user.period=1m",
				"rate-limit.policies.per-user.key=user",
				"rate-limit.rules[6].path=/me", "rate-limit.rules[6].policies=per-user",
				"rate-limit.rules[7].path=/login-void", "rate-limit.rules[7].policies=login",
				"rate-limit.policies.per-account.limit=2", "rate-limit.policies.per-account.period=1m",
				"rate-limit.policies.per-account.key=@accountOfApiKey",
				"rate-limit.rules[8].path=/account", "rate-limit.rules[8].policies=per-account" })
class ReactiveEndToEndTests {

	static {
		NonBlocking.install();
	}

	@LocalServerPort
	int port;

	Http http;

	@BeforeEach
	void client() {
		this.http = new Http(this.port);
	}

	@Test
	void aPathRuleAllowsItsLimitWithHeadersThenAnswers429WithAProblem() {
		for (int remaining = 2; remaining >= 0; remaining--) {
			HttpResponse<String> allowed = this.http.get("/api/hello");
			assertThat(allowed.statusCode()).isEqualTo(200);
			assertThat(allowed.headers().firstValue("X-RateLimit-Limit")).hasValue("3");
			assertThat(allowed.headers().firstValue("X-RateLimit-Remaining")).hasValue(Integer.toString(remaining));
			assertThat(allowed.headers().firstValue("RateLimit-Policy")).hasValue("\"api\";q=3;w=60");
		}
		HttpResponse<String> rejected = this.http.get("/api/hello");
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(rejected.headers().firstValue("Retry-After")).hasValueSatisfying((value) ->
				assertThat(Long.parseLong(value)).isBetween(1L, 20L));
		assertThat(rejected.headers().firstValue("RateLimit")).hasValueSatisfying((value) ->
				assertThat(value).startsWith("\"api\";r=0;t="));
		assertThat(rejected.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(rejected.headers().firstValue("Cache-Control")).hasValue("no-store");
		assertThat(rejected.body()).contains("\"type\":\"https://iana.org/assignments/http-problem-types#quota-exceeded\"")
			.contains("\"status\":429").contains("\"violated-policies\":[\"api\"]").contains("\"instance\":\"/api/hello\"");
	}

	@Test
	void aRequestThatFindsNoHandlerSpendsItsPathRulesBudget() {
		for (int i = 0; i < 3; i++) {
			HttpResponse<String> missing = this.http.get("/api/missing");
			assertThat(missing.statusCode()).isEqualTo(404);
			assertThat(missing.headers().firstValue("X-RateLimit-Remaining")).hasValue(Integer.toString(2 - i));
		}
		assertThat(this.http.get("/api/missing").statusCode()).isEqualTo(429);
		assertThat(this.http.get("/api/hello").statusCode()).as("one budget for the path").isEqualTo(429);
	}

	@Test
	void anAnnotatedHandlerIsLimitedByItsOwnPolicyKeyedByItsPathVariable() {
		assertThat(this.http.get("/reports/7").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/reports/7").statusCode()).isEqualTo(200);
		HttpResponse<String> rejected = this.http.get("/reports/7");
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(rejected.body()).contains("\"violated-policies\":[\"per-report\"]");
		assertThat(this.http.get("/reports/8").statusCode()).as("another report, another budget").isEqualTo(200);
	}

	@Test
	void aFunctionalRouteIsLimitedByItsPathRule() {
		assertThat(this.http.get("/fn/hello").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/fn/hello").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/fn/hello").statusCode()).isEqualTo(429);
	}

	@Test
	void aLoginFormIsKeyedByItsUsernameAndOnlyFailuresCount() {
		for (int i = 0; i < 5; i++) {
			assertThat(this.http.post("/login", "username=cleo&password=right").statusCode()).as("successes are free")
				.isEqualTo(200);
		}
		for (int i = 0; i < 3; i++) {
			HttpResponse<String> failed = this.http.post("/login", "username=alice&password=wrong");
			assertThat(failed.statusCode()).isEqualTo(401);
			assertThat(failed.headers().firstValue("X-RateLimit-Remaining")).as("counted once the status is known")
				.hasValue(Integer.toString(2 - i));
		}
		assertThat(this.http.post("/login", "username=alice&password=right").statusCode()).as("locked out")
			.isEqualTo(429);
		assertThat(this.http.post("/login", "username=ALICE&password=right").statusCode()).as("the same account")
			.isEqualTo(429);
		assertThat(this.http.post("/login", "username=bob&password=right").statusCode()).isEqualTo(200);
	}

	@Test
	void aStatusSetAfterTheChainEndedIsTheOneCounted() {
		for (int i = 0; i < 5; i++) {
			HttpResponse<String> success = this.http.post("/login-void", "username=dora&password=right");
			assertThat(success.statusCode()).as("a handler that sets a status alone").isEqualTo(204);
			assertThat(success.headers().firstValue("X-RateLimit-Remaining")).as("not counted").hasValue("3");
		}
		for (int i = 0; i < 3; i++) {
			HttpResponse<String> failure = this.http.post("/login-void", "username=dora&password=wrong");
			assertThat(failure.statusCode()).as("answered by the error handler").isEqualTo(401);
			assertThat(failure.headers().firstValue("X-RateLimit-Remaining")).hasValue(Integer.toString(2 - i));
		}
		assertThat(this.http.post("/login-void", "username=dora&password=right").statusCode()).isEqualTo(429);
	}

	@Test
	void aFormBodyTooLargeToReadIsRefusedNeverKeyedByTheClientIp() {
		String large = "username=alice&password=" + "x".repeat(4096);
		HttpResponse<String> refused = this.http.post("/login", large);
		assertThat(refused.statusCode()).isEqualTo(413);
		assertThat(refused.headers().firstValue("Content-Type")).hasValue("application/problem+json");
	}

	@Test
	void twoParallelRequestsHoldTheSlotsAndAThirdIsRefusedUntilOneEnds() throws Exception {
		ReactiveApplication.Api.gate = new CompletableFuture<>();
		ReactiveApplication.Api.held.set(0);
		List<CompletableFuture<HttpResponse<String>>> slow = new ArrayList<>();
		// A thread each: the default executor of supplyAsync may run them one after the other (Java 25, 2 cores).
		ExecutorService clients = Executors.newFixedThreadPool(2);
		for (int i = 0; i < 2; i++) {
			slow.add(CompletableFuture.supplyAsync(() -> this.http.get("/work?held=true"), clients));
		}
		clients.shutdown();
		for (int i = 0; i < 1000 && ReactiveApplication.Api.held.get() < 2; i++) {
			Thread.sleep(10);
		}
		HttpResponse<String> third = this.http.get("/work?ms=0");
		assertThat(third.statusCode()).as("both slots held").isEqualTo(429);
		assertThat(third.headers().firstValue("RateLimit")).hasValue("\"slots\";r=0");
		ReactiveApplication.Api.gate.complete(null);
		for (CompletableFuture<HttpResponse<String>> request : slow) {
			assertThat(request.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
		}
		// The slots come back once the server completed the requests, a moment after the client read them.
		int next = this.http.get("/work?ms=0").statusCode();
		for (int i = 0; i < 100 && next == 429; i++) {
			Thread.sleep(20);
			next = this.http.get("/work?ms=0").statusCode();
		}
		assertThat(next).as("the slots were given back").isEqualTo(200);
	}

	@Test
	void aUserKeyIsTheAuthenticatedPrincipalOfSpringSecurity() {
		String ann = "Basic " + Base64.getEncoder().encodeToString("ann:secret".getBytes(StandardCharsets.UTF_8));
		String ben = "Basic " + Base64.getEncoder().encodeToString("ben:secret".getBytes(StandardCharsets.UTF_8));
		assertThat(this.http.get("/me", "Authorization", ann).body()).isEqualTo("ann");
		assertThat(this.http.get("/me", "Authorization", ann).statusCode()).isEqualTo(200);
		assertThat(this.http.get("/me", "Authorization", ann).statusCode()).isEqualTo(429);
		assertThat(this.http.get("/me", "Authorization", ben).statusCode()).as("another user").isEqualTo(200);
		assertThat(this.http.get("/me").statusCode()).as("anonymous: the client IP's budget").isEqualTo(200);
	}

	@Test
	void aKeyLookedUpByIOIsAwaitedWithoutAThreadAndKeysItsAccount() {
		assertThat(this.http.get("/account", "X-Api-Key", "k1").statusCode()).isEqualTo(200);
		HttpResponse<String> second = this.http.get("/account", "X-Api-Key", "k2");
		assertThat(second.statusCode()).isEqualTo(200);
		assertThat(second.headers().firstValue("X-RateLimit-Remaining")).as("one account, two API keys").hasValue("0");
		assertThat(this.http.get("/account", "X-Api-Key", "k1").statusCode()).isEqualTo(429);
		assertThat(this.http.get("/account", "X-Api-Key", "k3").statusCode()).as("another account").isEqualTo(200);
		HttpResponse<String> failed = this.http.get("/account", "X-Api-Key", "boom");
		assertThat(failed.statusCode()).as("a lookup that fails never picks a budget").isEqualTo(400);
		assertThat(failed.body()).contains("'per-account' cannot be applied to this request: its key cannot be read");
	}

	@Test
	void aBrowsersCorsPreflightSpendsNothing() {
		for (int i = 0; i < 5; i++) {
			this.http.options("/api/hello", "Origin", "https://example.com", "Access-Control-Request-Method", "GET");
		}
		assertThat(this.http.get("/api/hello").headers().firstValue("X-RateLimit-Remaining")).hasValue("2");
	}

	@Test
	void sixtyFourParallelRequestsOnOneKeyAreAdmittedExactlyToTheLimit() throws Exception {
		Map<Integer, Integer> statuses = AtOnce.statuses(64, (i) -> () -> this.http.get("/many").statusCode());
		assertThat(statuses).containsExactlyInAnyOrderEntriesOf(Map.of(200, 20, 429, 44));
	}

	@Test
	void simultaneousRequestsInDelayModeWaitOnATimerForTheirTurn() throws Exception {
		long start = System.nanoTime();
		Map<Integer, Integer> statuses = AtOnce.statuses(3, (i) -> () -> this.http.get("/smooth").statusCode());
		long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
		assertThat(statuses).containsExactlyEntriesOf(Map.of(200, 3));
		assertThat(elapsedMillis).as("the third waits two drain intervals of 250 ms").isGreaterThanOrEqualTo(450);
	}

}
