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
 * {@code rate-limit.client-ip.header=X-Real-IP}: a header the proxy sets to one address; the
 * other forwarding headers are not read.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "rate-limit.client-ip.trusted-proxies=127.0.0.1", "rate-limit.client-ip.header=X-Real-IP" })
class SingleAddressHeaderEndToEndTests {

	@LocalServerPort
	int port;

	Http http;

	@BeforeEach
	void client() {
		this.http = new Http(this.port);
	}

	@Test
	void otherHeadersCannotChooseTheKey() {
		assertOneBudget(this.http, "/ip/real-ip-xff", "X-Forwarded-For", (i) -> "6.6.6." + i);
		assertOneBudget(this.http, "/ip/third/real-ip-fwd", "Forwarded", (i) -> "for=6.6.6." + i);
	}

	@Test
	void theProxysHeaderIsTheClient() {
		for (int i = 0; i < 3; i++) {
			assertThat(this.http.get("/ip/other/real", "X-Real-IP", "198.51.100.7:5000").statusCode()).isEqualTo(200);
		}
		assertThat(this.http.get("/ip/other/real", "X-Real-IP", "198.51.100.7").statusCode()).isEqualTo(429);
		assertThat(this.http.get("/ip/other/real", "X-Real-IP", "198.51.100.8").statusCode()).isEqualTo(200);
	}

}
