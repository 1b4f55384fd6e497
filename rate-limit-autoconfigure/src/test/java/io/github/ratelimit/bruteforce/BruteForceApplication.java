package io.github.ratelimit.bruteforce;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.http.ResponseEntity;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * A login form keyed by its username: {@code password=right} logs in (200), any other is a failed attempt
 * (401). Which policies apply is up to each test's path rules; {@code slowMillis} makes the handler slow.
 */
@SpringBootApplication
public class BruteForceApplication {

	@Bean
	SecurityFilterChain securityFilterChain(HttpSecurity http) throws Exception {
		return http.authorizeHttpRequests((requests) -> requests.anyRequest().permitAll())
			.csrf((csrf) -> csrf.disable())
			.build();
	}

	@RestController
	static class LoginController {

		@PostMapping({ "/login", "/shadow-login", "/login-one", "/banned-login", "/login-lock" })
		ResponseEntity<String> login(@RequestParam String username, @RequestParam String password,
				@RequestParam(defaultValue = "0") long slowMillis) throws InterruptedException {
			Thread.sleep(slowMillis);
			return "right".equals(password) ? ResponseEntity.ok("welcome " + username)
					: ResponseEntity.status(401).body("wrong password");
		}

		@GetMapping("/ping")
		String ping() {
			return "pong";
		}

	}

}
