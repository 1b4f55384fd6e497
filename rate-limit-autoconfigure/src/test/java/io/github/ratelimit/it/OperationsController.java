package io.github.ratelimit.it;

import java.io.IOException;
import java.util.concurrent.Callable;

import jakarta.servlet.http.HttpServletResponse;

import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

import io.github.ratelimit.web.CountMode;
import io.github.ratelimit.web.RateLimited;

/**
 * Brute-force protection (count failures only) and shadow limits.
 */
@RestController
@RequestMapping("/ops")
class OperationsController {

	@PostMapping("/login")
	@RateLimited(name = "login", limit = 3, period = "1m", key = "param:user", count = CountMode.FAILURES)
	ResponseEntity<String> login(@RequestParam String user, @RequestParam String password,
			@RequestParam(defaultValue = "0") long slowMillis) throws InterruptedException {
		Thread.sleep(slowMillis);
		return "right".equals(password) ? ResponseEntity.ok("welcome " + user)
				: ResponseEntity.status(HttpStatus.UNAUTHORIZED).body("no");
	}

	@PostMapping("/thrown-login")
	@RateLimited(name = "thrown-login", limit = 3, period = "1m", key = "param:user", count = CountMode.FAILURES)
	String thrownLogin(@RequestParam String user, @RequestParam String password) {
		if (!"right".equals(password)) {
			throw new ResponseStatusException(HttpStatus.UNAUTHORIZED, "no");
		}
		return "welcome " + user;
	}

	@PostMapping("/sent-error-login")
	@RateLimited(name = "sent-error-login", limit = 3, period = "1m", key = "param:user", count = CountMode.FAILURES)
	void sentErrorLogin(@RequestParam String user, @RequestParam String password, HttpServletResponse response)
			throws IOException {
		if (!"right".equals(password)) {
			response.sendError(401, "no");
			return;
		}
		response.getWriter().write("welcome " + user);
	}

	@PostMapping("/async-thrown-login")
	@RateLimited(name = "async-thrown-login", limit = 3, period = "1m", key = "param:user", count = CountMode.FAILURES)
	Callable<String> asyncThrownLogin(@RequestParam String user, @RequestParam String password) {
		return () -> {
			if (!"right".equals(password)) {
				throw new ResponseStatusException(HttpStatus.UNAUTHORIZED, "no");
			}
			return "welcome " + user;
		};
	}

	@GetMapping("/redirected-successes")
	@RateLimited(name = "redirected-successes", limit = 2, period = "1m", count = CountMode.SUCCESSES)
	void redirectedSuccesses(HttpServletResponse response) throws IOException {
		response.sendRedirect("/ops/search");
	}

	@PostMapping("/crashing-login")
	@RateLimited(name = "crashing-login", limit = 3, period = "1m", key = "param:user", count = CountMode.FAILURES)
	String crashingLogin(@RequestParam String user, @RequestParam String password) {
		if (!"right".equals(password)) {
			throw new IllegalStateException("the directory is down");
		}
		return "welcome " + user;
	}

	@PostMapping("/async-login")
	@RateLimited(name = "async-login", limit = 2, period = "1m", key = "param:user", count = CountMode.FAILURES)
	Callable<ResponseEntity<String>> asyncLogin(@RequestParam String user, @RequestParam String password) {
		return () -> "right".equals(password) ? ResponseEntity.ok("welcome " + user)
				: ResponseEntity.status(HttpStatus.UNAUTHORIZED).body("no");
	}

	@GetMapping("/successes")
	@RateLimited(name = "successes", limit = 2, period = "1m", count = CountMode.SUCCESSES)
	ResponseEntity<String> successes(@RequestParam boolean ok) {
		return ok ? ResponseEntity.ok("ok") : ResponseEntity.badRequest().body("bad");
	}

	@GetMapping("/search")
	@RateLimited(name = "search", limit = 3, period = "1m", key = "header:X-Query")
	String search() {
		return "found";
	}

	@GetMapping("/observed")
	@RateLimited(name = "observed", limit = 2, period = "1m", shadow = true)
	String observed() {
		return "observed";
	}

	@GetMapping("/observed-and-enforced")
	@RateLimited(name = "observed-wide", limit = 1, period = "1m", shadow = true)
	@RateLimited(name = "enforced", limit = 3, period = "1m")
	String observedAndEnforced() {
		return "both";
	}

}
