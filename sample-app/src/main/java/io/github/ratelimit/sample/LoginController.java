package io.github.ratelimit.sample;

import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import io.github.ratelimit.web.RateLimited;

/**
 * A login form limited per username by the {@code login} policy of {@code application.yml}, whose key
 * is {@code param:username}: guessing one user's password soon locks that user out, while other users
 * keep their own budget.
 */
@RestController
class LoginController {

	static final String PASSWORD = "correct-horse";

	@RateLimited("login")
	@PostMapping(path = "/api/login", consumes = MediaType.APPLICATION_FORM_URLENCODED_VALUE,
			produces = MediaType.TEXT_PLAIN_VALUE)
	ResponseEntity<String> login(@RequestParam String username, @RequestParam String password) {
		if (!PASSWORD.equals(password)) {
			return ResponseEntity.status(HttpStatus.UNAUTHORIZED).body("Wrong username or password");
		}
		return ResponseEntity.ok("Welcome, " + username);
	}

}
