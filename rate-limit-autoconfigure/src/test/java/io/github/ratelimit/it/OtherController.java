package io.github.ratelimit.it;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import io.github.ratelimit.web.RateLimited;

/**
 * Has a method of the same name as {@link LimitedController}: their budgets must not mix.
 */
@RestController
@RateLimited(limit = 2, period = "1m")
class OtherController {

	@GetMapping("/o/list")
	String list() {
		return "other list";
	}

	@GetMapping("/o/second")
	String second() {
		return "second";
	}

}
