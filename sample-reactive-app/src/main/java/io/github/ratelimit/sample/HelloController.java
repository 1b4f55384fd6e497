package io.github.ratelimit.sample;

import reactor.core.publisher.Mono;

import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * Endpoints limited only by configuration, or not at all: {@code /api/hello} is limited by the path rule in
 * {@code application.yml}, {@code /api/ping} by nothing.
 */
@RestController
class HelloController {

	@GetMapping(path = "/api/hello", produces = MediaType.TEXT_PLAIN_VALUE)
	Mono<String> hello() {
		return Mono.just("Hello, world!");
	}

	@GetMapping(path = "/api/ping", produces = MediaType.TEXT_PLAIN_VALUE)
	Mono<String> ping() {
		return Mono.just("pong");
	}

}
