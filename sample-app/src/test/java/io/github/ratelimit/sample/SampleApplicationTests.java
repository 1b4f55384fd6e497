package io.github.ratelimit.sample;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.ApplicationContext;
import org.springframework.data.redis.connection.RedisConnectionFactory;

import io.github.ratelimit.core.CaffeineRateLimitStore;
import io.github.ratelimit.core.RateLimitStore;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs the sample application on a random port and calls each endpoint over HTTP, as a client would.
 * All requests come from 127.0.0.1 and the test methods share one application (and one store), so
 * each IP-keyed endpoint is called by one test method only, and login tests use their own usernames. The
 * login's slow-down waits milliseconds here instead of seconds (its configured values are checked as the
 * actuator shows them).
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "rate-limit.policies.login.slow-down.delay=1ms", "rate-limit.policies.login.slow-down.max-delay=4ms" })
class SampleApplicationTests {

	private static final String QUOTA_EXCEEDED = "https://iana.org/assignments/http-problem-types#quota-exceeded";

	private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	@LocalServerPort
	private int port;

	@Autowired
	private ApplicationContext context;

	@Test
	void needsNoRedisWithoutTheRedisProfile() throws Exception {
		// Spring Data Redis is in the jar, for the redis profile; without it nothing connects to Redis.
		assertThat(this.context.getBeansOfType(RedisConnectionFactory.class)).isEmpty();
		assertThat(this.context.getBean(RateLimitStore.class)).isInstanceOf(CaffeineRateLimitStore.class);
		HttpResponse<String> health = get("/actuator/health");
		assertThat(health.statusCode()).isEqualTo(200);
		assertThat(health.body()).contains("\"status\":\"UP\"").doesNotContain("redis");
	}

	@Test
	void workRunsAtMostTwoAtOncePerClient() throws Exception {
		// Three requests at once: two slow ones run, the third is rejected while they do.
		java.util.concurrent.CompletableFuture<HttpResponse<String>> first = java.util.concurrent.CompletableFuture
			.supplyAsync(() -> call("/api/work?ms=4000"));
		java.util.concurrent.CompletableFuture<HttpResponse<String>> second = java.util.concurrent.CompletableFuture
			.supplyAsync(() -> call("/api/work?ms=4000"));
		String state = "";
		for (int i = 0; i < 300 && !state.contains("\"inFlight\":2"); i++) {
			Thread.sleep(10);
			state = get("/actuator/ratelimits/work/ip:127.0.0.1").body();
		}
		assertThat(state).contains("\"inFlight\":2");
		HttpResponse<String> third = get("/api/work?ms=0");
		assertThat(third.statusCode()).isEqualTo(429);
		assertThat(header(third, "Retry-After")).isEqualTo("1");
		assertThat(header(third, "RateLimit-Policy")).isEqualTo("\"work\";q=2;qu=\"concurrent-requests\"");
		assertThat(header(third, "RateLimit")).isEqualTo("\"work\";r=0");
		assertThat(first.get().statusCode()).isEqualTo(200);
		assertThat(second.get().statusCode()).isEqualTo(200);
		assertThat(second.get().body()).isEqualTo("worked 4000 ms");
		// The slots come back once the server has completed both requests, a moment after they were read.
		for (int i = 0; i < 100 && !state.contains("\"inFlight\":0"); i++) {
			Thread.sleep(50);
			state = get("/actuator/ratelimits/work/ip:127.0.0.1").body();
		}
		HttpResponse<String> after = get("/api/work?ms=0");
		assertThat(after.statusCode()).as("both slots are back").isEqualTo(200);
		assertThat(header(after, "RateLimit")).isEqualTo("\"work\";r=1");
		// Bad input is a 400, never a 500, and holds no slot.
		for (String bad : new String[] { "-1", "10001", "abc", "99999999999999999999" }) {
			assertThat(get("/api/work?ms=" + bad).statusCode()).as(bad).isEqualTo(400);
		}
		assertThat(get("/api/work?ms=0").statusCode()).isEqualTo(200);
	}

	@Test
	void aResetForgetsTheSlotsInFlightWithoutLettingTheirEndFreeSlotsTakenSince() throws Exception {
		// Runs after or before workRunsAtMostTwoAtOncePerClient (same client IP): each ends with nothing in flight.
		String key = "/actuator/ratelimits/work/ip:127.0.0.1";
		var before = java.util.List.of(java.util.concurrent.CompletableFuture.supplyAsync(() -> call("/api/work?ms=1500")),
				java.util.concurrent.CompletableFuture.supplyAsync(() -> call("/api/work?ms=1500")));
		awaitInFlight(key, 2);
		HttpRequest reset = HttpRequest.newBuilder(uri(key)).DELETE().build();
		assertThat(this.client.send(reset, HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(200);
		// The operator's reset gives the client its two slots at once...
		var after = java.util.List.of(java.util.concurrent.CompletableFuture.supplyAsync(() -> call("/api/work?ms=4000")),
				java.util.concurrent.CompletableFuture.supplyAsync(() -> call("/api/work?ms=4000")));
		awaitInFlight(key, 2);
		for (var response : before) {
			assertThat(response.get().statusCode()).isEqualTo(200);
		}
		// ...but the end of the requests it forgot frees none of them: two run, a third is refused.
		Thread.sleep(200);
		assertThat(get("/api/work?ms=0").statusCode()).as("a third while two run").isEqualTo(429);
		assertThat(get(key).body()).contains("\"inFlight\":2");
		for (var response : after) {
			assertThat(response.get().statusCode()).isEqualTo(200);
		}
		awaitInFlight(key, 0);
		assertThat(get("/api/work?ms=0").statusCode()).isEqualTo(200);
	}

	private void awaitInFlight(String key, int inFlight) throws Exception {
		String state = "";
		for (int i = 0; i < 300 && !state.contains("\"inFlight\":" + inFlight); i++) {
			Thread.sleep(10);
			state = get(key).body();
		}
		assertThat(state).contains("\"inFlight\":" + inFlight);
	}

	private HttpResponse<String> call(String path) {
		try {
			return get(path);
		}
		catch (IOException ex) {
			throw new java.io.UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	@Test
	void helloIsLimitedByThePathRule() throws Exception {
		for (int i = 1; i <= 5; i++) {
			HttpResponse<String> response = get("/api/hello");
			assertThat(response.statusCode()).isEqualTo(200);
			assertThat(response.body()).isEqualTo("Hello, world!");
			assertThat(header(response, "Content-Type")).startsWith("text/plain");
			assertThat(header(response, "X-RateLimit-Limit")).isEqualTo("5");
			assertThat(header(response, "X-RateLimit-Remaining")).isEqualTo(Integer.toString(5 - i));
			assertThat(Long.parseLong(header(response, "X-RateLimit-Reset"))).isBetween(1L, 60L);
			assertThat(header(response, "RateLimit-Policy")).isEqualTo("\"api\";q=5;w=60");
			assertThat(header(response, "RateLimit")).matches("\"api\";r=" + (5 - i) + ";t=\\d+");
			assertThat(response.headers().firstValue("Retry-After")).isEmpty();
		}
		HttpResponse<String> rejected = get("/api/hello");
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(Long.parseLong(header(rejected, "Retry-After"))).isBetween(1L, 60L);
		assertThat(header(rejected, "Content-Type")).startsWith("application/problem+json");
		assertThat(header(rejected, "X-RateLimit-Limit")).isEqualTo("5");
		assertThat(header(rejected, "X-RateLimit-Remaining")).isEqualTo("0");
		assertThat(header(rejected, "RateLimit")).matches("\"api\";r=0;t=\\d+");
		assertThat(rejected.body()).contains("\"type\":\"" + QUOTA_EXCEEDED + "\"")
			.contains("\"status\":429")
			.contains("\"instance\":\"/api/hello\"")
			.contains("\"violated-policies\":[\"api\"]");
	}

	@Test
	void pingIsNeverLimited() throws Exception {
		for (int i = 0; i < 50; i++) {
			HttpResponse<String> response = get("/api/ping");
			assertThat(response.statusCode()).isEqualTo(200);
			assertThat(response.body()).isEqualTo("pong");
			assertThat(response.headers().map().keySet())
				.noneMatch((name) -> name.toLowerCase().startsWith("x-ratelimit") || name.toLowerCase().startsWith("ratelimit")
						|| name.equalsIgnoreCase("Retry-After"));
		}
	}

	@Test
	void loginIsLimitedPerUsername() throws Exception {
		for (int i = 1; i <= 5; i++) {
			HttpResponse<String> failed = login("alice", "password" + i);
			assertThat(failed.statusCode()).isEqualTo(401);
			assertThat(header(failed, "X-RateLimit-Limit")).isEqualTo("5");
			assertThat(header(failed, "X-RateLimit-Remaining")).isEqualTo(Integer.toString(5 - i));
			assertThat(header(failed, "RateLimit-Policy")).isEqualTo("\"login\";q=5;w=900");
		}
		HttpResponse<String> lockedOut = login("alice", "correct-horse");
		assertThat(lockedOut.statusCode()).isEqualTo(429);
		assertThat(Long.parseLong(header(lockedOut, "Retry-After"))).isBetween(1L, 180L);
		assertThat(lockedOut.body()).contains("\"violated-policies\":[\"login\"]");
		HttpResponse<String> otherUser = login("bob", "correct-horse");
		assertThat(otherUser.statusCode()).isEqualTo(200);
		assertThat(otherUser.body()).isEqualTo("Welcome, bob");
		assertThat(header(otherUser, "X-RateLimit-Remaining")).as("a right password never counts").isEqualTo("5");
	}

	@Test
	void loginSlowsDownThenLocksOutThenBans() throws Exception {
		String policy = get("/actuator/ratelimits/login").body();
		assertThat(policy).contains("\"slowDown\":{\"after\":2,\"delay\":\"PT0.001S\",\"maxDelay\":\"PT0.004S\"}")
			.contains("\"ban\":{\"after\":3,\"within\":\"PT15M\",\"duration\":\"PT15M\"}");
		for (int i = 1; i <= 5; i++) {
			assertThat(login("ivan", "password" + i).statusCode()).isEqualTo(401);
		}
		assertThat(login("ivan", "correct-horse").statusCode()).isEqualTo(429);
		assertThat(login("ivan", "correct-horse").statusCode()).isEqualTo(429);
		HttpResponse<String> banned = login("ivan", "correct-horse");
		assertThat(banned.statusCode()).isEqualTo(429);
		assertThat(header(banned, "Retry-After")).isEqualTo("900");
		assertThat(banned.body()).contains("banned until").contains("\"banned-until\":");
		assertThat(get("/actuator/metrics/ratelimit.decisions?tag=policy:login&tag=outcome:slowed").body())
			.contains("\"value\":");
		HttpRequest lift = HttpRequest.newBuilder(uri("/actuator/ratelimits/login/param:ivan")).DELETE().build();
		assertThat(this.client.send(lift, HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(200);
		assertThat(login("ivan", "correct-horse").statusCode()).isEqualTo(200);
	}

	@Test
	void theArrayFormOfTheUsernameIsTheSameAccountsLockout() throws Exception {
		// Spring MVC binds username[]=erin to @RequestParam username when username itself is absent: the
		// lockout must count it as erin, or each client IP gets 5 fresh guesses at erin's password.
		for (int i = 1; i <= 5; i++) {
			assertThat(login("erin", "password" + i).statusCode()).isEqualTo(401);
		}
		HttpResponse<String> arrayForm = send(form("username%5B%5D=erin&password=correct-horse"));
		assertThat(arrayForm.statusCode()).isEqualTo(429);
		HttpResponse<String> inTheQuery = send(HttpRequest.newBuilder(uri("/api/login?username%5B%5D=erin"))
			.header("Content-Type", "application/x-www-form-urlencoded")
			.POST(HttpRequest.BodyPublishers.ofString("password=correct-horse"))
			.build());
		assertThat(inTheQuery.statusCode()).isEqualTo(429);
		// Guesses in the array form count against the same account too.
		for (int i = 1; i <= 5; i++) {
			assertThat(send(form("username%5B%5D=frank&password=wrong" + i)).statusCode()).isEqualTo(401);
		}
		assertThat(login("frank", "correct-horse").statusCode()).isEqualTo(429);
	}

	@Test
	void aLoginWhoseParametersCannotBeDecodedIsRefusedNotKeyedByIp() throws Exception {
		// Tomcat fails the first read of such parameters, then hands the handler those before the bad byte:
		// keyed by IP, each would be a fresh guess at victim2's password.
		for (int i = 1; i <= 5; i++) {
			assertThat(login("victim2", "password" + i).statusCode()).isEqualTo(401);
		}
		assertThat(login("victim2", "guess").statusCode()).isEqualTo(429);
		for (String junk : new String[] { "x=%FF", "x=%ZZ", "x=%", "%FF=1", "x=%C0%AF" }) {
			HttpResponse<String> refused = send(form("username=victim2&password=guess&" + junk));
			assertThat(refused.statusCode()).as(junk).isEqualTo(400);
			assertThat(refused.headers().firstValue("Content-Type")).hasValue("application/problem+json");
			assertThat(refused.body()).contains("'login'");
		}
		assertThat(login("victim2", "correct-horse").statusCode()).as("still locked out").isEqualTo(429);
	}

	@Test
	void aUsernameWrittenAnotherWayIsTheSameAccountsLockout() throws Exception {
		// An application that trims names (Spring Security's form login) or compares them without case
		// (an LDAP directory) takes each of these as grace: each must not be 5 fresh guesses at her password.
		for (String variant : new String[] { "Grace", "grace ", "\uff47\uff52\uff41\uff43\uff45", "GRACE", "grace" }) {
			assertThat(login(variant, "wrong").statusCode()).as(variant).isEqualTo(401);
		}
		assertThat(login("GRACE", "correct-horse").statusCode()).isEqualTo(429);
		assertThat(login("grace", "correct-horse").statusCode()).isEqualTo(429);
	}

	@Test
	void aUsernameWithInvisibleOrLookalikeLettersIsTheSameAccountsLockout() throws Exception {
		// A soft hyphen and a zero-width space do not show (an LDAP directory drops them), and
		// String#equalsIgnoreCase takes the dotless i for i: each must not be 5 fresh guesses at heidi's password.
		for (String variant : new String[] { "hei\u00addi", "he\u200bidi", "he\u0131di", "HEIDI", "heidi" }) {
			assertThat(login(variant, "wrong").statusCode()).as(variant).isEqualTo(401);
		}
		assertThat(login("HE\u0130D\u0130", "correct-horse").statusCode()).isEqualTo(429);
		assertThat(login("heidi", "correct-horse").statusCode()).isEqualTo(429);
	}

	@Test
	void loginWithTheRightPasswordSucceeds() throws Exception {
		HttpResponse<String> response = login("carol", "correct-horse");
		assertThat(response.statusCode()).isEqualTo(200);
		assertThat(response.body()).isEqualTo("Welcome, carol");
		assertThat(header(response, "X-RateLimit-Remaining")).isEqualTo("5");
	}

	@Test
	void reportsCostFiveTokensOfTen() throws Exception {
		HttpResponse<String> first = get("/api/reports/1");
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(first.body()).contains("\"id\":\"1\"").contains("Report 1");
		assertThat(header(first, "X-RateLimit-Limit")).isEqualTo("10");
		assertThat(header(first, "X-RateLimit-Remaining")).isEqualTo("5");
		assertThat(header(first, "RateLimit-Policy")).isEqualTo("\"reports\";q=10;w=60");
		HttpResponse<String> second = get("/api/reports/2");
		assertThat(second.statusCode()).isEqualTo(200);
		assertThat(header(second, "X-RateLimit-Remaining")).isEqualTo("0");
		HttpResponse<String> rejected = get("/api/reports/3");
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(header(rejected, "X-RateLimit-Remaining")).isEqualTo("0");
		// 5 tokens at 10 a minute take 30 seconds to come back.
		assertThat(Long.parseLong(header(rejected, "Retry-After"))).isBetween(1L, 30L);
		assertThat(rejected.body()).contains("\"violated-policies\":[\"reports\"]");
	}

	@Test
	void exportIsSmoothedNotRejected() throws Exception {
		for (int i = 0; i < 4; i++) {
			HttpResponse<String> response = get("/api/export");
			assertThat(response.statusCode()).isEqualTo(200);
			assertThat(response.body()).isEqualTo("exported");
		}
	}

	@Test
	void searchIsOnlyWatchedByAShadowPolicy() throws Exception {
		for (int i = 0; i < 6; i++) {
			HttpResponse<String> response = get("/api/search?q=x");
			assertThat(response.statusCode()).isEqualTo(200);
			assertThat(response.headers().firstValue("X-RateLimit-Limit")).isEmpty();
		}
		assertThat(get("/actuator/metrics/ratelimit.decisions?tag=policy:search&tag=outcome:shadow-rejected").body())
			.contains("\"value\":4.0");
	}

	@Test
	void theActuatorUnlocksALockedOutUser() throws Exception {
		for (int i = 0; i < 5; i++) {
			login("dave", "nope");
		}
		assertThat(login("dave", "correct-horse").statusCode()).isEqualTo(429);
		assertThat(get("/actuator/ratelimits").body()).contains("\"login\"").contains("\"count\":\"failures\"");
		HttpRequest unlock = HttpRequest.newBuilder(uri("/actuator/ratelimits/login/param:dave")).DELETE().build();
		assertThat(this.client.send(unlock, HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(200);
		assertThat(login("dave", "correct-horse").statusCode()).isEqualTo(200);
	}

	@Test
	void quotesAreSoldInPlansTakenFromTheApiKey() throws Exception {
		HttpResponse<String> free = get("/api/quotes", "X-Api-Key", "demo-free-key");
		assertThat(free.statusCode()).isEqualTo(200);
		assertThat(header(free, "RateLimit-Policy")).isEqualTo("\"quotes\";q=5;w=60");
		HttpResponse<String> pro = get("/api/quotes", "X-Api-Key", "demo-pro-key");
		assertThat(header(pro, "RateLimit-Policy")).isEqualTo("\"quotes\";q=100;w=60");
		for (int i = 0; i < 8; i++) {
			HttpResponse<String> internal = get("/api/quotes", "X-Api-Key", "internal-batch-key");
			assertThat(internal.statusCode()).isEqualTo(200);
			assertThat(internal.headers().firstValue("RateLimit")).as("exempt: no headers").isEmpty();
		}
		// An invented key is a budget of its own, and worth nothing: the application does not know it.
		for (String invented : new String[] { "demo-free-key2", "DEMO-FREE-KEY", "x" }) {
			HttpResponse<String> unknown = get("/api/quotes", "X-Api-Key", invented);
			assertThat(unknown.statusCode()).as(invented).isEqualTo(401);
			assertThat(unknown.body()).isEqualTo("Unknown API key");
		}
	}

	private HttpResponse<String> get(String path, String headerName, String headerValue)
			throws IOException, InterruptedException {
		HttpRequest request = HttpRequest.newBuilder(uri(path)).header(headerName, headerValue).GET().build();
		return this.client.send(request, HttpResponse.BodyHandlers.ofString());
	}

	private HttpResponse<String> get(String path) throws IOException, InterruptedException {
		HttpRequest request = HttpRequest.newBuilder(uri(path)).GET().build();
		return this.client.send(request, HttpResponse.BodyHandlers.ofString());
	}

	private HttpRequest form(String form) {
		return HttpRequest.newBuilder(uri("/api/login"))
			.header("Content-Type", "application/x-www-form-urlencoded")
			.POST(HttpRequest.BodyPublishers.ofString(form))
			.build();
	}

	private HttpResponse<String> send(HttpRequest request) throws IOException, InterruptedException {
		return this.client.send(request, HttpResponse.BodyHandlers.ofString());
	}

	private HttpResponse<String> login(String username, String password) throws IOException, InterruptedException {
		String form = "username=" + URLEncoder.encode(username, StandardCharsets.UTF_8) + "&password="
				+ URLEncoder.encode(password, StandardCharsets.UTF_8);
		HttpRequest request = HttpRequest.newBuilder(uri("/api/login"))
			.header("Content-Type", "application/x-www-form-urlencoded")
			.POST(HttpRequest.BodyPublishers.ofString(form))
			.build();
		return this.client.send(request, HttpResponse.BodyHandlers.ofString());
	}

	private URI uri(String path) {
		return URI.create("http://localhost:" + this.port + path);
	}

	private static String header(HttpResponse<?> response, String name) {
		return response.headers()
			.firstValue(name)
			.orElseThrow(() -> new AssertionError("no " + name + " header in " + response.headers().map()));
	}

}
