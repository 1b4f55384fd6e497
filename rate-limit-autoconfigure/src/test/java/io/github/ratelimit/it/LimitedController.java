package io.github.ratelimit.it;

import org.springframework.web.bind.annotation.CrossOrigin;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

import io.github.ratelimit.web.RateLimited;

@RestController
@RequestMapping("/t")
class LimitedController {

	@GetMapping("/inline")
	@RateLimited(limit = 3, period = "1m")
	String inline() {
		return "inline";
	}

	@PostMapping("/inline")
	String inlinePost() {
		return "not limited";
	}

	@GetMapping("/retry")
	@RateLimited(limit = 2, period = "10s")
	String retry() {
		return "retry";
	}

	@GetMapping("/named-a")
	@RateLimited("shared")
	String namedA() {
		return "a";
	}

	@GetMapping("/named-b")
	@RateLimited("shared")
	String namedB() {
		return "b";
	}

	@GetMapping("/items/{id}")
	@RateLimited(limit = 2, period = "1m", key = "#{'item-' + pathVariables['id']}")
	String item(@PathVariable String id) {
		return id;
	}

	@GetMapping(path = "/negotiated", produces = "application/json")
	@RateLimited(limit = 1, period = "1m")
	String json() {
		return "{}";
	}

	@GetMapping(path = "/negotiated", produces = "text/plain")
	String text() {
		return "text";
	}

	@GetMapping("/user")
	@RateLimited(limit = 2, period = "1m", key = "user")
	String user() {
		return "user";
	}

	@GetMapping("/header")
	@RateLimited(limit = 2, period = "1m", key = "header:X-Api-Key")
	String header() {
		return "header";
	}

	@GetMapping("/param")
	@RateLimited(limit = 2, period = "1m", key = "param:name")
	String param() {
		return "param";
	}

	@GetMapping("/global")
	@RateLimited(limit = 2, period = "1m", key = "global")
	String global() {
		return "global";
	}

	@GetMapping("/bean")
	@RateLimited(limit = 2, period = "1m", key = "@tenantKey")
	String bean() {
		return "bean";
	}

	@GetMapping("/multi")
	@RateLimited(name = "wide", limit = 5, period = "1m")
	@RateLimited(name = "narrow", limit = 2, period = "10s")
	String multi() {
		return "multi";
	}

	@GetMapping("/expensive")
	@RateLimited(limit = 10, period = "1m", cost = 4)
	String expensive() {
		return "expensive";
	}

	@GetMapping("/expensive-shared")
	@RateLimited(value = "shared-costly", cost = 3)
	String expensiveShared() {
		return "expensive-shared";
	}

	@GetMapping("/cheap-shared")
	@RateLimited("shared-costly")
	String cheapShared() {
		return "cheap-shared";
	}

	@GetMapping("/ruled")
	@RateLimited("ruled")
	String ruled() {
		return "ruled";
	}

	@GetMapping("/concurrent")
	@RateLimited(limit = 200, period = "1h", key = "global")
	String concurrent() {
		return "ok";
	}

	@CrossOrigin(origins = "https://app.example", exposedHeaders = { "RateLimit", "RateLimit-Policy", "Retry-After" })
	@PostMapping("/cors")
	@RateLimited(limit = 2, period = "1m")
	String cors() {
		return "annotated";
	}

	@GetMapping("/queued")
	@RateLimited("queued")
	String queued() {
		return "queued";
	}

	@GetMapping("/list")
	@RateLimited(limit = 1, period = "1m")
	String list() {
		return "limited list";
	}

	@GetMapping("/async")
	@RateLimited(limit = 2, period = "1m")
	java.util.concurrent.Callable<String> async() {
		return () -> "async";
	}

	@GetMapping("/fails")
	@RateLimited(limit = 2, period = "1m")
	String fails() {
		throw new IllegalStateException("boom");
	}

}
