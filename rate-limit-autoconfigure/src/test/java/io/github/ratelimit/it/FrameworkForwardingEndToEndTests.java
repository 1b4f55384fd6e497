package io.github.ratelimit.it;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import io.github.ratelimit.testsupport.Http;

import static io.github.ratelimit.it.Spoofing.assertOneBudget;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code server.forward-headers-strategy=framework}: Spring's {@code ForwardedHeaderFilter} believes
 * every client's forwarding headers, and still no client chooses its own key.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = "server.forward-headers-strategy=framework")
class FrameworkForwardingEndToEndTests {

	@LocalServerPort
	int port;

	Http http;

	@BeforeEach
	void client() {
		this.http = new Http(this.port);
	}

	@Test
	void springBelievesTheClientHere() {
		assertThat(this.http.get("/ip/remote", "X-Forwarded-For", "6.6.6.6").body()).isEqualTo("6.6.6.6");
		assertThat(this.http.get("/ip/remote", "Forwarded", "for=7.7.7.7").body()).isEqualTo("7.7.7.7");
	}

	@Test
	void spoofedForwardedForChangesNoKey() {
		assertOneBudget(this.http, "/ip/xff", "X-Forwarded-For", (i) -> "6.6.6." + i);
	}

	@Test
	void spoofedForwardedChangesNoKey() {
		assertOneBudget(this.http, "/ip/other/forwarded", "Forwarded", (i) -> "for=\"[2001:db8:" + i + "::1]:80\"");
	}

}
