package io.github.ratelimit.it;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import io.github.ratelimit.testsupport.Http;

import static io.github.ratelimit.it.Spoofing.assertOneBudget;

/**
 * {@code server.forward-headers-strategy=native} with the limiter's own trusted proxy: the limiter's
 * trust decides, not Tomcat's (which also trusts 10.0.0.0/8), and non-IP hops never become keys.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "server.forward-headers-strategy=native", "rate-limit.client-ip.trusted-proxies=127.0.0.1" })
class NativeForwardingBehindProxyEndToEndTests {

	@LocalServerPort
	int port;

	Http http;

	@BeforeEach
	void client() {
		this.http = new Http(this.port);
	}

	@Test
	void theLimitersTrustDecides() {
		// Tomcat would skip 10.0.0.7 (an internal proxy to it) and take 203.0.113.i; to the limiter,
		// 10.0.0.7 is not a trusted proxy, so it is the client.
		assertOneBudget(this.http, "/ip/native-trust", "X-Forwarded-For", (i) -> "203.0.113." + i + ", 10.0.0.7");
	}

	@Test
	void nonIpHopsNeverBecomeKeys() {
		assertOneBudget(this.http, "/ip/other/native-garbage", "X-Forwarded-For", (i) -> "garbage-" + i);
	}

}
