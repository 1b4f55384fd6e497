package io.github.ratelimit.sample;

import java.time.Duration;

import reactor.core.publisher.Mono;

import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

/**
 * A slow call under a concurrency limit: {@code /api/work?ms=N} works for N milliseconds (500 by default, at
 * most 10 s) on a timer; the path rule of the policy {@code work} lets at most 2 run at once per client IP.
 */
@RestController
class WorkController {

	static final long MAX_MILLIS = 10_000;

	@GetMapping(path = "/api/work", produces = MediaType.TEXT_PLAIN_VALUE)
	Mono<String> work(@RequestParam(defaultValue = "500") long ms) {
		if (ms < 0 || ms > MAX_MILLIS) {
			return Mono.error(new ResponseStatusException(HttpStatus.BAD_REQUEST, "ms must be between 0 and " + MAX_MILLIS));
		}
		return Mono.delay(Duration.ofMillis(ms)).thenReturn("worked " + ms + " ms");
	}

}
