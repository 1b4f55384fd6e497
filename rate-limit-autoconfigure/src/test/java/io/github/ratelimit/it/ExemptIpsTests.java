package io.github.ratelimit.it;

import java.net.http.HttpResponse;

import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import io.github.ratelimit.testsupport.Http;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code rate-limit.exempt.ips}: the test client (loopback) is exempt, so nothing limits it, whatever
 * forwarding header it sends.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = "rate-limit.exempt.ips=127.0.0.0/8, ::1")
class ExemptIpsTests {

	@LocalServerPort
	int port;

	@Autowired
	MeterRegistry meters;

	@Test
	void anExemptClientIpIsNeverLimitedAndCarriesNoHeaders() {
		Http http = new Http(this.port);
		for (int i = 0; i < 6; i++) {
			HttpResponse<String> response = http.get("/t/inline", "X-Forwarded-For", "203.0.113.9");
			assertThat(response.statusCode()).isEqualTo(200);
			assertThat(response.headers().map().keySet()).noneMatch((name) -> name.toLowerCase().contains("ratelimit"));
		}
		assertThat(this.meters.get("ratelimit.decisions").tag("policy", "LimitedController.inline")
			.tag("outcome", "exempt").counter().count()).isEqualTo(6);
	}
}
