package io.github.ratelimit.gateway;

import reactor.core.publisher.Mono;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.context.annotation.Bean;

/** A gateway whose routes the tests' {@code application.yml} writes, with a key resolver of its own. */
@SpringBootApplication
public class GatewayApplication {

	/** The application's own key resolver, for {@code RequestRateLimiter} routes: the API key header. */
	@Bean
	KeyResolver apiKeyResolver() {
		return (exchange) -> Mono.justOrEmpty(exchange.getRequest().getHeaders().getFirst("X-Api-Key"));
	}

}
