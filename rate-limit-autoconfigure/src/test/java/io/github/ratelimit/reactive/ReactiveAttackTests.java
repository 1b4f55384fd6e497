package io.github.ratelimit.reactive;

import java.net.http.HttpResponse;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import io.github.ratelimit.testsupport.Http;
import io.github.ratelimit.testsupport.NonBlocking;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An attacker's tries for a second budget on WebFlux, through a running Netty server behind a trusted proxy
 * (the test client, on loopback): IPv6 addresses rotated within one /64, forwarding headers that are junk,
 * and a flood of distinct usernames against a lockout, with the in-process store tracking at most 50 keys per
 * policy. As on Spring MVC ({@code BadClientInputTests}, {@code NetworkKeysEndToEndTests}).
 */
@SpringBootTest(classes = ReactiveApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive",
				"rate-limit.client-ip.trusted-proxies=127.0.0.1,::1", "rate-limit.store.caffeine.maximum-size=50",
				"rate-limit.policies.api.limit=2", "rate-limit.policies.api.period=1m",
				"rate-limit.policies.login.limit=3", "rate-limit.policies.login.period=15m",
				"rate-limit.policies.login.key=param:username", "rate-limit.policies.login.count=failures",
				"rate-limit.policies.per-report.limit=2", "rate-limit.policies.per-report.period=1m",
				"rate-limit.rules[0].path=/api/**", "rate-limit.rules[0].policies=api",
				"rate-limit.rules[1].path=/login", "rate-limit.rules[1].policies=login" })
class ReactiveAttackTests {

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
	void addressesRotatedWithinOneIpv6NetworkShareItsBudget() {
		for (int i = 1; i <= 2; i++) {
			assertThat(this.http.get("/api/hello", "X-Forwarded-For", "2001:db8:77:1::" + Integer.toHexString(i))
				.statusCode()).isEqualTo(200);
		}
		HttpResponse<String> rotated = this.http.get("/api/hello", "X-Forwarded-For", "2001:db8:77:1:ffff:1:2:3");
		assertThat(rotated.statusCode()).as("the same /64").isEqualTo(429);
		assertThat(this.http.get("/api/hello", "X-Forwarded-For", "2001:db8:77:2::1").statusCode())
			.as("another network").isEqualTo(200);
	}

	@Test
	void junkForwardingHeadersNeverFailNorGetAFreshBudget() {
		String[] junk = { "not-an-ip", "::::", "999.1.1.1", "1.2.3", ",,,,", "\u00e9t\u00e9", ",".repeat(4000) };
		int allowed = 0;
		for (int round = 0; round < 2; round++) {
			for (String value : junk) {
				int status = this.http.get("/api/hello", "X-Forwarded-For", value).statusCode();
				assertThat(status).as(value).isIn(200, 429);
				allowed += (status == 200) ? 1 : 0;
			}
		}
		assertThat(allowed).as("no junk is a client: all are the proxy's, one budget").isEqualTo(2);
	}

	/**
	 * Ten times the maximum size of junk usernames: the locked-out user stays locked out, and a new victim
	 * attacked during the flood gets no more than one budget of guesses.
	 */
	@Test
	void aFloodOfDistinctKeysLiftsNoLockout() {
		for (int i = 0; i < 3; i++) {
			assertThat(login("locked", "wrong")).isEqualTo(401);
		}
		assertThat(login("locked", "right")).isEqualTo(429);
		int victimGuesses = 0;
		for (int i = 0; i < 10 * 50; i++) {
			assertThat(login("junk-" + i, "wrong")).isIn(401, 429);
			if (i % 10 == 0 && login("victim", "guess-" + i) == 401) {
				victimGuesses++;
			}
		}
		assertThat(login("locked", "right")).as("still locked out").isEqualTo(429);
		assertThat(victimGuesses).as("guesses the new victim's budget let through").isLessThanOrEqualTo(3);
		assertThat(login("victim", "right")).isEqualTo(429);
	}

	private int login(String username, String password) {
		return this.http.post("/login", "username=" + username + "&password=" + password).statusCode();
	}

}
