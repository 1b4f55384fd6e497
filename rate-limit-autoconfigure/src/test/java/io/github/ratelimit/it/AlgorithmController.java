package io.github.ratelimit.it;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

import io.github.ratelimit.web.OnLimit;
import io.github.ratelimit.web.RateLimited;

/**
 * One endpoint per algorithm, and delay mode.
 */
@RestController
@RequestMapping("/algo")
class AlgorithmController {

	@GetMapping("/token-bucket")
	@RateLimited(limit = 3, period = "1m", algorithm = "token-bucket")
	String tokenBucket() {
		return "ok";
	}

	@GetMapping("/fixed-window")
	@RateLimited(limit = 3, period = "1m", algorithm = "fixed-window")
	String fixedWindow() {
		return "ok";
	}

	@GetMapping("/sliding-window-log")
	@RateLimited(limit = 3, period = "1m", algorithm = "sliding-window-log")
	String slidingWindowLog() {
		return "ok";
	}

	@GetMapping("/sliding-window-counter")
	@RateLimited(limit = 3, period = "1m", algorithm = "sliding-window-counter")
	String slidingWindowCounter() {
		return "ok";
	}

	@GetMapping("/leaky-bucket")
	@RateLimited(limit = 3, period = "1m", algorithm = "leaky-bucket")
	String leakyBucket() {
		return "ok";
	}

	@GetMapping("/smooth")
	@RateLimited(name = "smooth", limit = 4, period = "1s", burst = 10, algorithm = "leaky-bucket",
			onLimit = OnLimit.DELAY, maxDelay = "1s")
	String smooth() {
		return "smooth";
	}

	@GetMapping("/reserve")
	@RateLimited("reserve")
	String reserve() {
		return "reserve";
	}

}
