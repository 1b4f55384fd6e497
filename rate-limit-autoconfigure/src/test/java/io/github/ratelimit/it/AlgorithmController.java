package io.github.ratelimit.it;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.web.OnLimit;
import io.github.ratelimit.web.RateLimited;

/**
 * One endpoint per algorithm, and delay mode.
 */
@RestController
@RequestMapping("/algo")
class AlgorithmController {

	@GetMapping("/token-bucket")
	@RateLimited(limit = 3, period = "1m", algorithm = Algorithm.TOKEN_BUCKET)
	String tokenBucket() {
		return "ok";
	}

	@GetMapping("/fixed-window")
	@RateLimited(limit = 3, period = "1m", algorithm = Algorithm.FIXED_WINDOW)
	String fixedWindow() {
		return "ok";
	}

	@GetMapping("/sliding-window-log")
	@RateLimited(limit = 3, period = "1m", algorithm = Algorithm.SLIDING_WINDOW_LOG)
	String slidingWindowLog() {
		return "ok";
	}

	@GetMapping("/sliding-window-counter")
	@RateLimited(limit = 3, period = "1m", algorithm = Algorithm.SLIDING_WINDOW_COUNTER)
	String slidingWindowCounter() {
		return "ok";
	}

	@GetMapping("/leaky-bucket")
	@RateLimited(limit = 3, period = "1m", algorithm = Algorithm.LEAKY_BUCKET)
	String leakyBucket() {
		return "ok";
	}

	@GetMapping("/smooth")
	@RateLimited(name = "smooth", limit = 4, period = "1s", burst = 10, algorithm = Algorithm.LEAKY_BUCKET,
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
