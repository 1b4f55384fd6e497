package io.github.ratelimit.it;

import org.springframework.web.bind.annotation.CrossOrigin;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

@RestController
class RuleController {

	@GetMapping("/r/hello")
	String hello() {
		return "hello";
	}

	@PostMapping("/r/hello")
	String helloPost() {
		return "posted";
	}

	@CrossOrigin(origins = "https://app.example", exposedHeaders = { "RateLimit", "RateLimit-Policy", "Retry-After" })
	@PostMapping("/cors/rule")
	String corsRule() {
		return "rule";
	}

	@GetMapping("/free")
	String free() {
		return "free";
	}

}
