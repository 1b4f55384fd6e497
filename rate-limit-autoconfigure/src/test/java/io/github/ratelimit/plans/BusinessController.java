package io.github.ratelimit.plans;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

import io.github.ratelimit.web.RateLimited;

/**
 * Plans and exemptions (outside the scanned test package: only the tests that import it have its policies): {@code /biz/api} is limited by a path rule on the policy {@code api} (see
 * {@code PlansAndExemptionsTests}), {@code /biz/partner} by {@code @RateLimited("partnered")}.
 */
@RestController
@RequestMapping("/biz")
public class BusinessController {

	@GetMapping("/api")
	String api() {
		return "api";
	}

	@GetMapping("/partner")
	@RateLimited("partnered")
	String partner() {
		return "partner";
	}

	@GetMapping("/probed")
	@RateLimited("probed")
	String probed() {
		return "probed";
	}

}
