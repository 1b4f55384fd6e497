package io.github.ratelimit.plans;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import io.github.ratelimit.web.RateLimited;

/**
 * Limited by the policy {@code tunable}, which {@code RuntimeChangeTests} changes at run time (by a
 * path rule and by this annotation alike).
 */
@RestController
public class TunableController {

	@GetMapping("/tunable")
	String tunable() {
		return "tunable";
	}

	@GetMapping("/tunable/annotated")
	@RateLimited("tunable")
	String annotated() {
		return "annotated";
	}

}
