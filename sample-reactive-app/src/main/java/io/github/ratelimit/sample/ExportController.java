package io.github.ratelimit.sample;

import reactor.core.publisher.Mono;

import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.web.OnLimit;
import io.github.ratelimit.web.RateLimited;

/**
 * Delay (throttle) mode and shadow limits: {@code /api/export} is smoothed (a leaky bucket serving two a second,
 * queueing up to five, holding a request at most two seconds, on a timer); {@code /api/search} is watched by a
 * shadow policy that never rejects.
 */
@RestController
class ExportController {

	@RateLimited(name = "export", algorithm = Algorithm.LEAKY_BUCKET, limit = 2, period = "1s", burst = 5,
			onLimit = OnLimit.DELAY, maxDelay = "2s")
	@GetMapping(path = "/api/export", produces = MediaType.TEXT_PLAIN_VALUE)
	Mono<String> export() {
		return Mono.just("exported");
	}

	@GetMapping(path = "/api/search", produces = MediaType.TEXT_PLAIN_VALUE)
	Mono<String> search(@RequestParam(defaultValue = "") String q) {
		return Mono.just("results for '" + q + "'");
	}

}
