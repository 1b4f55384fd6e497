package io.github.ratelimit.sample;

import java.util.Map;
import java.util.Set;

import reactor.core.publisher.Mono;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

import io.github.ratelimit.web.RequestKeyResolver;

/**
 * {@code GET /api/quotes}: an API sold in plans. The policy {@code quotes} in {@code application.yml} keys
 * requests by API key and takes each key's plan from the bean {@code planOfApiKey}, the same
 * {@link RequestKeyResolver} as on Spring MVC: a free key gets 5 requests a minute, a pro key 100. A key the
 * application does not know answers {@code 401}.
 */
@RestController
class QuoteController {

	/** The demo's API keys (in an application, the customer database). */
	private static final Set<String> API_KEYS = Set.of("demo-free-key", "demo-pro-key", "internal-batch-key");

	@GetMapping(path = "/api/quotes", produces = MediaType.TEXT_PLAIN_VALUE)
	Mono<ResponseEntity<String>> quote(@RequestHeader(name = "X-Api-Key", required = false) String apiKey) {
		if (apiKey == null || !API_KEYS.contains(apiKey)) {
			return Mono.just(ResponseEntity.status(HttpStatus.UNAUTHORIZED).body("Unknown API key"));
		}
		return Mono.just(ResponseEntity.ok("Premature optimization is the root of all evil."));
	}

	@Configuration(proxyBeanMethods = false)
	static class Plans {

		/** Demo API keys and their plans; keys not listed are on the policy's own (free) limit. */
		private static final Map<String, String> PLAN_BY_API_KEY = Map.of("demo-pro-key", "pro");

		@Bean
		RequestKeyResolver planOfApiKey() {
			return (request) -> {
				String apiKey = request.header("X-Api-Key");
				return (apiKey != null) ? PLAN_BY_API_KEY.get(apiKey) : null;
			};
		}

	}

}
