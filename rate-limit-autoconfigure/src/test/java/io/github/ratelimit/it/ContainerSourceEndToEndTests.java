package io.github.ratelimit.it;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import io.github.ratelimit.testsupport.Http;

import static io.github.ratelimit.it.Spoofing.assertOneBudget;
import static io.github.ratelimit.it.Spoofing.tenTimes;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code rate-limit.client-ip.source=container}: the address Tomcat resolved is taken on purpose (its
 * {@code RemoteIpValve} trusts loopback), but a value that is not an IP address is not believed.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "server.forward-headers-strategy=native", "rate-limit.client-ip.source=container" })
class ContainerSourceEndToEndTests {

	@LocalServerPort
	int port;

	Http http;

	@BeforeEach
	void client() {
		this.http = new Http(this.port);
	}

	@Test
	void theContainersResolutionIsTheKey() {
		for (int i = 0; i < 3; i++) {
			assertThat(this.http.get("/ip/container", "X-Forwarded-For", "198.51.100.7").statusCode()).isEqualTo(200);
		}
		assertThat(this.http.get("/ip/container", "X-Forwarded-For", "198.51.100.7").statusCode()).isEqualTo(429);
		assertThat(this.http.get("/ip/container", "X-Forwarded-For", "198.51.100.8").statusCode())
			.as("another client to the container").isEqualTo(200);
		assertThat(tenTimes(this.http, "/ip/container", "X-Forwarded-For", (i) -> "198.51.100." + (20 + i)))
			.containsOnly(200);
	}

	@Test
	void nonIpValuesAreNotBelieved() {
		assertOneBudget(this.http, "/ip/other/container", "X-Forwarded-For", (i) -> "garbage-" + i);
	}

}
