package io.github.ratelimit.it;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import io.github.ratelimit.testsupport.Http;

import static io.github.ratelimit.it.Spoofing.assertOneBudget;

/**
 * {@code server.forward-headers-strategy=framework} behind a trusted proxy: Spring's filter hides
 * {@code X-Forwarded-For} from the application, and the limiter still reads the proxy's hop.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "server.forward-headers-strategy=framework", "rate-limit.client-ip.trusted-proxies=127.0.0.1" })
class FrameworkForwardingBehindProxyEndToEndTests {

	@LocalServerPort
	int port;

	Http http;

	@BeforeEach
	void client() {
		this.http = new Http(this.port);
	}

	@Test
	void theHopOurProxyAppendedIsTheClient() {
		// The client wrote the left part; our proxy (127.0.0.1) appended 203.0.113.5.
		assertOneBudget(this.http, "/ip/framework", "X-Forwarded-For", (i) -> "6.6.6." + i + ", 203.0.113.5");
	}

}
