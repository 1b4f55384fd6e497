package io.github.ratelimit.it;

import java.net.http.HttpResponse;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import io.github.ratelimit.core.caffeine.CaffeineRateLimitStore;
import io.github.ratelimit.testsupport.Http;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Hostile or broken client input never yields a 500 and never grows memory without bound.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = "rate-limit.client-ip.trusted-proxies=127.0.0.1")
class BadClientInputTests {

	@LocalServerPort
	int port;

	@Autowired
	CaffeineRateLimitStore store;

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

	@Test
	void aFloodOfDistinctKeysStaysWithinTheMaximumSize() {
		for (int i = 0; i < 2500; i++) {
			this.http.get("/t/header", "X-Api-Key", "flood-" + i);
		}
		assertThat(this.store.size()).isLessThanOrEqualTo(1000);
	}
}
