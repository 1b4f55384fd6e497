package io.github.ratelimit.reactive;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

import reactor.core.publisher.Mono;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.core.userdetails.MapReactiveUserDetailsService;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.server.ServerWebExchange;

import io.github.ratelimit.web.AsyncRequestKeyResolver;
import io.github.ratelimit.web.RateLimited;

/**
 * A WebFlux application on Netty: annotated handlers, a login form ({@code password=right} logs in, any other
 * is a failed attempt, 401), a slow handler, and a functional route. Which policies apply is up to the tests'
 * properties. Spring Security permits every request.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import(ReactiveApplication.Api.class)
class ReactiveApplication {

	@Bean
	SecurityWebFilterChain securityWebFilterChain(ServerHttpSecurity http) {
		return http.authorizeExchange((exchanges) -> exchanges.anyExchange().permitAll())
			.httpBasic(Customizer.withDefaults())
			.csrf(ServerHttpSecurity.CsrfSpec::disable)
			.build();
	}

	@Bean
	MapReactiveUserDetailsService users() {
		return new MapReactiveUserDetailsService(User.withUsername("ann").password("{noop}secret").roles("USER").build(),
				User.withUsername("ben").password("{noop}secret").roles("USER").build());
	}

	/**
	 * An API key's account, from a lookup that answers 20 ms later on a timer, as a call to another service
	 * does: {@code k1} and {@code k2} are acme's, {@code k3} globex's, {@code boom} fails the lookup.
	 */
	@Bean
	AsyncRequestKeyResolver accountOfApiKey() {
		Map<String, String> accounts = Map.of("k1", "acme", "k2", "acme", "k3", "globex");
		return (request) -> {
			String apiKey = request.header("X-Api-Key");
			return Mono.delay(Duration.ofMillis(20)).flatMap((tick) -> "boom".equals(apiKey)
					? Mono.<String>error(new IllegalStateException("the account service is away"))
					: Mono.justOrEmpty((apiKey != null) ? accounts.get(apiKey) : null)).toFuture();
		};
	}

	@Bean
	RouterFunction<ServerResponse> functionalRoutes() {
		return RouterFunctions.route()
			.GET("/fn/hello", (request) -> ServerResponse.ok().bodyValue("hello from a function"))
			.build();
	}

	@RestController
	static class Api {

		@GetMapping({ "/api/hello", "/smooth", "/many", "/account" })
		Mono<String> hello() {
			return Mono.just("hello");
		}

		@RateLimited("per-report")
		@GetMapping("/reports/{id}")
		Mono<String> report(@PathVariable String id) {
			return Mono.just("report " + id);
		}

		@PostMapping("/login")
		Mono<ResponseEntity<String>> login(ServerWebExchange exchange) {
			return exchange.getFormData().map((form) -> "right".equals(form.getFirst("password"))
					? ResponseEntity.ok("welcome " + form.getFirst("username"))
					: ResponseEntity.status(401).body("wrong password"));
		}

		@GetMapping("/me")
		Mono<String> me(ServerWebExchange exchange) {
			return exchange.getPrincipal().map((principal) -> principal.getName()).defaultIfEmpty("anonymous");
		}

		/** A login that answers with a status alone: 204, or 401 from the error handler. */
		@PostMapping("/login-void")
		@ResponseStatus(HttpStatus.NO_CONTENT)
		Mono<Void> loginVoid(ServerWebExchange exchange) {
			return exchange.getFormData().flatMap((form) -> "right".equals(form.getFirst("password")) ? Mono.<Void>empty()
					: Mono.error(new ResponseStatusException(HttpStatus.UNAUTHORIZED, "wrong password")));
		}

		/** Holds {@code /work?held=true} until a test completes it (at most 10 s), counting the requests it holds. */
		static volatile CompletableFuture<Void> gate = CompletableFuture.completedFuture(null);

		static final AtomicInteger held = new AtomicInteger();

		@GetMapping("/work")
		Mono<String> work(@RequestParam(defaultValue = "0") long ms, @RequestParam(defaultValue = "false") boolean held) {
			if (held) {
				Api.held.incrementAndGet();
				return Mono.fromFuture(gate.thenApply((released) -> "worked until released")).timeout(Duration.ofSeconds(10));
			}
			return Mono.delay(Duration.ofMillis(ms)).thenReturn("worked " + ms + " ms");
		}

	}

}
