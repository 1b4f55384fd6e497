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
 * {@code rate-limit.mode: shadow}: every limit decides and counts, none changes a response.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = "rate-limit.mode=shadow")
class ShadowModeTests {

	@LocalServerPort
	int port;

	@Autowired
	MeterRegistry meters;

	@Autowired
	RecordingDelay delay;

	@Test
	void nothingIsRejectedDelayedOrAnnotatedButEverythingIsCounted() {
		Http http = new Http(this.port);
		for (int i = 0; i < 6; i++) {
			HttpResponse<String> response = http.get("/t/inline");
			assertThat(response.statusCode()).isEqualTo(200);
			assertThat(response.headers().map().keySet()).noneMatch((name) -> name.toLowerCase().contains("ratelimit")
					|| name.equalsIgnoreCase("retry-after"));
		}
		for (int i = 0; i < 8; i++) {
			assertThat(http.get("/algo/smooth").statusCode()).isEqualTo(200);
		}
		assertThat(this.delay.waits).as("shadow mode never delays").isEmpty();
		assertThat(this.meters.get("ratelimit.decisions").tag("policy", "LimitedController.inline")
			.tag("outcome", "shadow-rejected").counter().count()).isEqualTo(3);
		assertThat(this.meters.get("ratelimit.decisions").tag("policy", "LimitedController.inline")
			.tag("outcome", "allowed").counter().count()).isEqualTo(3);
	}
}
