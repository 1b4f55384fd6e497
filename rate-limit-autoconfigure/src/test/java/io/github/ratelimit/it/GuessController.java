package io.github.ratelimit.it;

import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.web.CountMode;
import io.github.ratelimit.web.RateLimited;

/** Logins of 4 failed attempts a minute per user, one per algorithm that {@code count: failures} allows. */
@RestController
@RequestMapping("/guess")
class GuessController {

	@PostMapping("/token-bucket")
	@RateLimited(name = "guess-token-bucket", limit = 4, period = "1m", key = "param:user",
			count = CountMode.FAILURES, algorithm = Algorithm.TOKEN_BUCKET)
	ResponseEntity<String> tokenBucket(@RequestParam String user, @RequestParam String password,
			@RequestParam(defaultValue = "0") long slowMillis) throws InterruptedException {
		return check(password, slowMillis);
	}

	@PostMapping("/leaky-bucket")
	@RateLimited(name = "guess-leaky-bucket", limit = 4, period = "1m", key = "param:user",
			count = CountMode.FAILURES, algorithm = Algorithm.LEAKY_BUCKET)
	ResponseEntity<String> leakyBucket(@RequestParam String user, @RequestParam String password,
			@RequestParam(defaultValue = "0") long slowMillis) throws InterruptedException {
		return check(password, slowMillis);
	}

	@PostMapping("/fixed-window")
	@RateLimited(name = "guess-fixed-window", limit = 4, period = "1h", key = "param:user",
			count = CountMode.FAILURES, algorithm = Algorithm.FIXED_WINDOW)
	ResponseEntity<String> fixedWindow(@RequestParam String user, @RequestParam String password,
			@RequestParam(defaultValue = "0") long slowMillis) throws InterruptedException {
		return check(password, slowMillis);
	}

	@PostMapping("/sliding-window-log")
	@RateLimited(name = "guess-sliding-window-log", limit = 4, period = "1m", key = "param:user",
			count = CountMode.FAILURES, algorithm = Algorithm.SLIDING_WINDOW_LOG)
	ResponseEntity<String> slidingWindowLog(@RequestParam String user, @RequestParam String password,
			@RequestParam(defaultValue = "0") long slowMillis) throws InterruptedException {
		return check(password, slowMillis);
	}

	@PostMapping("/sliding-window-counter")
	@RateLimited(name = "guess-sliding-window-counter", limit = 4, period = "1h", key = "param:user",
			count = CountMode.FAILURES, algorithm = Algorithm.SLIDING_WINDOW_COUNTER)
	ResponseEntity<String> slidingWindowCounter(@RequestParam String user, @RequestParam String password,
			@RequestParam(defaultValue = "0") long slowMillis) throws InterruptedException {
		return check(password, slowMillis);
	}

	@PostMapping("/successes")
	@RateLimited(name = "guess-successes", limit = 4, period = "1m", key = "param:user",
			count = CountMode.SUCCESSES)
	ResponseEntity<String> successes(@RequestParam String user, @RequestParam String password,
			@RequestParam(defaultValue = "0") long slowMillis) throws InterruptedException {
		return check(password, slowMillis);
	}

	private static ResponseEntity<String> check(String password, long slowMillis) throws InterruptedException {
		Thread.sleep(slowMillis);
		return "right".equals(password) ? ResponseEntity.ok("welcome")
				: ResponseEntity.status(HttpStatus.UNAUTHORIZED).body("no");
	}

}
