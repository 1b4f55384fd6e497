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
 * On Kubernetes Spring Boot turns on {@code native} forwarding by itself: the default keeps working
 * with no further configuration, and no client chooses its key.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = "spring.main.cloud-platform=kubernetes")
class KubernetesPlatformEndToEndTests {

	@LocalServerPort
	int port;

	Http http;

	@BeforeEach
	void client() {
		this.http = new Http(this.port);
	}

	@Test
	void bootTurnedOnForwardingByItself() {
		assertThat(this.http.get("/ip/remote", "X-Forwarded-For", "6.6.6.6").body()).isEqualTo("6.6.6.6");
	}

	@Test
	void spoofedForwardedForChangesNoKey() {
		assertOneBudget(this.http, "/ip/kubernetes", "X-Forwarded-For", (i) -> "6.6.6." + i);
	}

	@Test
	void spoofedForwardedChangesNoKey() {
		assertOneBudget(this.http, "/ip/other/kubernetes", "Forwarded", (i) -> "for=6.6.6." + i);
	}

}
