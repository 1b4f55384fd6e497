package io.github.ratelimit.reactive;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.TestPropertySource;

import io.github.ratelimit.testsupport.Http;
import io.github.ratelimit.testsupport.NonBlocking;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a client's forwarding headers can do to its budget on Netty, whatever {@code server.forward-headers-strategy}
 * says (each subclass runs one): nothing, unless the connection's peer is a trusted proxy. Reactor Netty
 * ({@code native}) rewrites the request's remote address from any client's {@code X-Forwarded-For}, and Spring's
 * {@code ForwardedHeaderTransformer} ({@code framework}) the request handed on; the limiter keys the connection's peer.
 */
@TestPropertySource(properties = { "spring.main.web-application-type=reactive", "rate-limit.policies.by-ip.limit=2",
		"rate-limit.policies.by-ip.period=1m", "rate-limit.rules[0].path=/api/**", "rate-limit.rules[0].policies=by-ip",
		"rate-limit.policies.per-report.limit=2", "rate-limit.policies.per-report.period=1m" })
abstract class ForwardedHeadersContract {

	static {
		NonBlocking.install();
	}

	@LocalServerPort
	int port;

	Http http;

	@BeforeEach
	void client() {
		this.http = new Http(this.port);
	}

	@Test
	void rotatingForwardingHeadersGetNoSecondBudget() {
		for (int i = 0; i < 2; i++) {
			assertThat(this.http.get("/api/hello", "X-Forwarded-For", "203.0.113." + i, "Forwarded",
					"for=198.51.100." + i, "X-Real-IP", "192.0.2." + i).statusCode()).isEqualTo(200);
		}
		assertThat(this.http.get("/api/hello", "X-Forwarded-For", "203.0.113.99", "Forwarded", "for=198.51.100.99")
			.statusCode()).as("the connection's peer has spent its budget").isEqualTo(429);
	}

}
