package io.github.ratelimit.it;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import io.github.ratelimit.testsupport.Http;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code management.endpoint.ratelimits.access=read-only}, as the operations page shows: budgets can
 * be read, not reset.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "management.endpoints.web.exposure.include=ratelimits",
				"management.endpoint.ratelimits.access=read-only" })
class ReadOnlyActuatorEndToEndTests {

	@LocalServerPort
	int port;

	Http http;

	@BeforeEach
	void client() {
		this.http = new Http(this.port);
	}

	@Test
	void readsWorkAndResetsDoNot() {
		for (int i = 0; i < 4; i++) {
			this.http.get("/ip/read-only");
		}
		assertThat(this.http.get("/actuator/ratelimits/by-ip/ip:127.0.0.1").body()).contains("\"remaining\":0");
		assertThat(this.http.delete("/actuator/ratelimits/by-ip/ip:127.0.0.1").statusCode()).isEqualTo(405);
		assertThat(this.http.get("/actuator/ratelimits/by-ip/ip:127.0.0.1").body()).contains("\"remaining\":0");
		assertThat(this.http.get("/ip/read-only").statusCode()).isEqualTo(429);
	}

}
