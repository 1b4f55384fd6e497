package io.github.ratelimit.reactive;

import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.MediaType;

import io.github.ratelimit.testsupport.Http;
import io.github.ratelimit.testsupport.NonBlocking;
import io.github.ratelimit.web.ReactiveRateLimitRejectionHandler;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An application's own {@link ReactiveRateLimitRejectionHandler} writes the 429 on WebFlux, after the starter
 * set the status and the rate limit headers.
 */
@SpringBootTest(classes = ReactiveApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive", "rate-limit.policies.api.limit=1",
				"rate-limit.policies.api.period=1m", "rate-limit.rules[0].path=/api/**",
				"rate-limit.rules[0].policies=api", "rate-limit.policies.per-report.limit=2",
				"rate-limit.policies.per-report.period=1m" })
@Import(ReactiveRejectionHandlerTests.Rejections.class)
class ReactiveRejectionHandlerTests {

	static {
		NonBlocking.install();
	}

	@LocalServerPort
	int port;

	@Test
	void theApplicationsHandlerWritesTheRejection() {
		Http http = new Http(this.port);
		assertThat(http.get("/api/hello").statusCode()).isEqualTo(200);
		HttpResponse<String> rejected = http.get("/api/hello");
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(rejected.body()).isEqualTo("slow down, policy api, retry in 60 s");
		assertThat(rejected.headers().firstValue("Content-Type")).hasValue("text/plain");
		assertThat(rejected.headers().firstValue("Retry-After")).hasValue("60");
		assertThat(rejected.headers().firstValue("RateLimit-Policy")).hasValue("\"api\";q=1;w=60");
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class Rejections {

		@Bean
		ReactiveRateLimitRejectionHandler plainRejections() {
			return (exchange, result) -> {
				exchange.getResponse().getHeaders().setContentType(MediaType.TEXT_PLAIN);
				String text = "slow down, policy " + String.join(",", result.violatedPolicies()) + ", retry in "
						+ result.retryAfterSeconds() + " s";
				DataBuffer body = exchange.getResponse().bufferFactory().wrap(text.getBytes(StandardCharsets.UTF_8));
				return exchange.getResponse().writeWith(Mono.just(body));
			};
		}

	}

}
