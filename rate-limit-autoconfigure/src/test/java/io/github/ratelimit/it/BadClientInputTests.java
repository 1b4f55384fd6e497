package io.github.ratelimit.it;

import java.net.http.HttpResponse;
import java.time.Duration;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.ApplicationContext;

import io.github.ratelimit.core.CaffeineRateLimitStore;
import io.github.ratelimit.test.ManualClock;
import io.github.ratelimit.testsupport.Http;
import io.github.ratelimit.web.policy.ConfiguredPolicy;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Hostile or broken client input never yields a 500 and never grows memory without bound.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "rate-limit.client-ip.trusted-proxies=127.0.0.1", "rate-limit.store.caffeine.maximum-size=50",
				"management.endpoints.web.exposure.include=ratelimits" })
class BadClientInputTests {

	@LocalServerPort
	int port;

	@Autowired
	CaffeineRateLimitStore store;

	@Autowired
	ApplicationContext context;

	@Autowired
	ManualClock clock;

	Http http;

	@BeforeEach
	void client() {
		this.http = new Http(this.port);
	}

	@Test
	void hugeKeyHeadersAreHashedNotStoredRaw() {
		String huge = "k".repeat(6000);
		assertThat(this.http.get("/t/header", "X-Api-Key", huge).statusCode()).isEqualTo(200);
		assertThat(this.http.get("/t/header", "X-Api-Key", huge).statusCode()).isEqualTo(200);
		assertThat(this.http.get("/t/header", "X-Api-Key", huge).statusCode()).isEqualTo(429);
		assertThat(this.http.get("/t/header", "X-Api-Key", huge + "x").statusCode()).isEqualTo(200);
	}

	@Test
	void headersBeyondTheServersLimitGetA4xxNotA500() {
		HttpResponse<String> response = this.http.get("/t/header", "X-Api-Key", "k".repeat(20_000));
		assertThat(response.statusCode()).isBetween(400, 499);
	}

	@Test
	void spoofedAndMalformedForwardingHeadersNeverFail() {
		String[] values = { "not-an-ip", "1.2.3", "999.1.1.1, 2.2.2.2", ",,,,", "[::1]:80", "1.1.1.1 , , 2.2.2.2",
				"\u00e9t\u00e9", "2001:db8::1, 10.0.0.1", ",".repeat(4000) };
		for (String value : values) {
			HttpResponse<String> response = this.http.get("/t/global", "X-Forwarded-For", value);
			assertThat(response.statusCode()).as(value).isIn(200, 429);
		}
	}

	@Test
	void spoofedForwardingHeadersGetNoFreshBudget() {
		// 127.0.0.1 is a trusted proxy here, so the right-most untrusted hop is the client: a client that
		// writes its own X-Forwarded-For still ends up with the address our proxy appended last.
		for (int i = 0; i < 2; i++) {
			String spoofed = "6.6.6." + i + ", 203.0.113.5";
			assertThat(this.http.get("/t/param?name=spoof", "X-Forwarded-For", spoofed).statusCode()).isEqualTo(200);
		}
		assertThat(this.http.get("/t/param?name=spoof", "X-Forwarded-For", "7.7.7.7, 203.0.113.5").statusCode())
			.isEqualTo(429);
	}

	@Test
	void missingKeySourcesFallBackToTheClientIp() {
		assertThat(this.http.get("/t/bean").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/t/bean", "X-Tenant", "").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/t/bean", "X-Tenant", "   ").statusCode()).isEqualTo(429);
	}

	@Test
	void malformedPathsAndQueriesNeverFail() {
		for (String path : new String[] { "/t/param?name", "/t/param?=x", "/t/items/%E2%82",
				"/t/items/" + "a".repeat(3000), "/r/%2e%2e/hello" }) {
			assertThat(this.http.get(path).statusCode()).as(path).isNotEqualTo(500);
		}
	}

	/**
	 * Ten times the maximum size (50 per policy here) of junk usernames on the login policy and of junk
	 * header values on another: the locked-out user stays locked out, a new victim attacked during the
	 * flood gets no more than one budget of guesses, and each policy tracks at most 50 keys.
	 */
	@Test
	void aFloodOfDistinctKeysLiftsNoLockoutAndStaysWithinTheMaximumSize() {
		for (int i = 0; i < 3; i++) {
			assertThat(login("locked", "wrong").statusCode()).isEqualTo(401);
		}
		assertThat(login("locked", "right").statusCode()).isEqualTo(429);
		int victimGuesses = 0;
		for (int i = 0; i < 10 * 50; i++) {
			assertThat(login("junk-" + i, "wrong").statusCode()).isIn(401, 429);
			assertThat(this.http.get("/ops/search", "X-Query", "junk-" + i).statusCode()).isIn(200, 429);
			if (i % 10 == 0 && login("victim", "guess-" + i).statusCode() == 401) {
				victimGuesses++;
			}
		}
		assertThat(login("locked", "right").statusCode()).as("still locked out").isEqualTo(429);
		assertThat(victimGuesses).as("guesses the new victim's budget let through").isLessThanOrEqualTo(3);
		assertThat(login("victim", "guess").statusCode()).isEqualTo(429);
		assertThat(this.store.size(policyId("login"))).isEqualTo(50);
		assertThat(this.store.size(policyId("search"))).isEqualTo(50);
		assertThat(this.store.overflowDecisions(policyId("search"))).isGreaterThanOrEqualTo(10 * 50 - 50);
	}

	/**
	 * After a flood has filled the login table (3 failures a minute per user), the table makes room by itself
	 * once the flood's states are fresh: nobody calls a clean-up, and a new user is tracked on its own.
	 */
	@Test
	void aFullTableTracksNewUsersOnTheirOwnOnceTheFloodsStatesAreFresh() {
		long overflowDecisions = flood("filler-");
		assertThat(this.store.size(policyId("login"))).isEqualTo(50);

		// A minute and a second: every state of the flood is as good as fresh and may go. No request since.
		this.clock.advance(Duration.ofSeconds(62));
		for (int i = 0; i < 3; i++) {
			assertThat(login("zed", "wrong").statusCode()).isEqualTo(401);
		}
		assertThat(login("zed", "right").statusCode()).as("locked out").isEqualTo(429);
		assertThat(this.store.size(policyId("login"))).as("the flood's states left; zed is tracked on its own")
			.isEqualTo(1);
		assertThat(this.store.overflowDecisions(policyId("login"))).as("zed was not judged by an overflow budget")
			.isEqualTo(overflowDecisions);

		HttpResponse<String> unlocked = this.http.delete("/actuator/ratelimits/login/param:zed");
		assertThat(unlocked.body()).contains("\"remaining\":3");
		assertThat(login("zed", "right").statusCode()).as("unlocked").isEqualTo(200);
	}

	/** An operator's unlock reaches a user whom a full table judges by an overflow budget. */
	@Test
	void anUnlockReachesAUserJudgedByAnOverflowBudgetDuringAFlood() {
		flood("flood-");
		int guesses = 0;
		while (login("yves", "wrong").statusCode() == 401) {
			guesses++;
		}
		assertThat(guesses).as("at most one budget of guesses, shared with the junk").isLessThanOrEqualTo(3);
		assertThat(this.store.size(policyId("login"))).as("the table is still full; yves is not tracked").isEqualTo(50);

		HttpResponse<String> unlocked = this.http.delete("/actuator/ratelimits/login/param:yves");
		assertThat(unlocked.statusCode()).isEqualTo(200);
		assertThat(unlocked.body()).contains("\"remaining\":3");
		assertThat(login("yves", "right").statusCode()).as("unlocked").isEqualTo(200);
		// The flood's states fresh, so that the tests after this one find room for their users.
		this.clock.advance(Duration.ofSeconds(62));
	}

	/**
	 * Sixty junk usernames, one failure each, on a table with room for fifty at most.
	 * @return the overflow decisions of the login policy since start
	 */
	private long flood(String prefix) {
		for (int i = 0; i < 60; i++) {
			assertThat(login(prefix + i, "wrong").statusCode()).isIn(401, 429);
		}
		return this.store.overflowDecisions(policyId("login"));
	}

	private HttpResponse<String> login(String user, String password) {
		return this.http.post("/ops/login", "user=" + user + "&password=" + password);
	}

	private String policyId(String name) {
		return ConfiguredPolicy.annotated(this.context, name).id();
	}
}
