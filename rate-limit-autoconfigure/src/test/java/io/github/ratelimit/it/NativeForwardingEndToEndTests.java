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
 * {@code server.forward-headers-strategy=native}: Tomcat's {@code RemoteIpValve} rewrites the remote
 * address before any filter runs (it trusts loopback by default), and still no client chooses its key.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = "server.forward-headers-strategy=native")
class NativeForwardingEndToEndTests {

	@LocalServerPort
	int port;

	Http http;

	@BeforeEach
	void client() {
		this.http = new Http(this.port);
	}

	@Test
	void tomcatBelievesTheClientHere() {
		assertThat(this.http.get("/ip/remote", "X-Forwarded-For", "6.6.6.6").body()).isEqualTo("6.6.6.6");
	}

	@Test
	void spoofedForwardedForChangesNoKey() {
		assertOneBudget(this.http, "/ip/native", "X-Forwarded-For", (i) -> "6.6.6." + i);
	}

	@Test
	void spoofedGarbageChangesNoKey() {
		assertOneBudget(this.http, "/ip/other/garbage", "X-Forwarded-For", (i) -> "garbage-" + i);
	}

}
