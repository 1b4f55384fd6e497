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
 * {@code rate-limit.client-ip.header=Forwarded}: behind a proxy that writes RFC 7239 {@code Forwarded}
 * only, a client that sends {@code X-Forwarded-For} itself cannot choose its key.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "rate-limit.client-ip.trusted-proxies=127.0.0.1", "rate-limit.client-ip.header=Forwarded" })
class ForwardedHeaderChoiceEndToEndTests {

	@LocalServerPort
	int port;

	Http http;

	@BeforeEach
	void client() {
		this.http = new Http(this.port);
	}

	@Test
	void theOtherHeaderCannotChooseTheKey() {
		assertOneBudget(this.http, "/ip/xff-sent", "X-Forwarded-For", (i) -> "6.6.6." + i);
	}

	@Test
	void forwardedIsReadWithPortsAndObfuscation() {
		for (int i = 0; i < 3; i++) {
			assertThat(this.http.get("/ip/other/fwd", "Forwarded", "for=6.6.6." + i + ", for=\"198.51.100.7:4711\"")
				.statusCode()).isEqualTo(200);
		}
		assertThat(this.http.get("/ip/other/fwd", "Forwarded", "for=\"198.51.100.7\";proto=https").statusCode())
			.isEqualTo(429);
		assertThat(this.http.get("/ip/other/fwd", "Forwarded", "for=\"[2001:db8::7]:443\"").statusCode())
			.isEqualTo(200);
		// An obfuscated hop ends the walk: the request is the proxy's, whatever the client wrote left of it.
		assertOneBudget(this.http, "/ip/third/hidden", "Forwarded", (i) -> "for=6.6.6." + i + ", for=_hidden");
	}

}
