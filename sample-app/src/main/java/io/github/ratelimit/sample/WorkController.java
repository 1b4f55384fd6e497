package io.github.ratelimit.sample;

import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

/**
 * A slow call under a concurrency limit: {@code /api/work?ms=N} works for N milliseconds (500 by
 * default, at most 10 s so that no client parks a thread for long); the path rule of the policy
 * {@code work} in {@code application.yml} lets at most 2 run at once per client IP. A third, while two
 * run, gets {@code 429} with {@code Retry-After: 1}.
 */
@RestController
class WorkController {

	static final long MAX_MILLIS = 10_000;

	@GetMapping(path = "/api/work", produces = MediaType.TEXT_PLAIN_VALUE)
	String work(@RequestParam(defaultValue = "500") long ms) throws InterruptedException {
		if (ms < 0 || ms > MAX_MILLIS) {
			throw new ResponseStatusException(HttpStatus.BAD_REQUEST, "ms must be between 0 and " + MAX_MILLIS);
		}
		Thread.sleep(ms);
		return "worked " + ms + " ms";
	}

}
