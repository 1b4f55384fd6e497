package io.github.ratelimit.sample;

import reactor.core.publisher.Mono;

import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.util.MultiValueMap;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ServerWebExchange;

import io.github.ratelimit.web.RateLimited;

/**
 * A login form limited per username by the {@code login} policy of {@code application.yml}, whose key is
 * {@code param:username}. The form is read as WebFlux keeps it ({@code exchange.getFormData()}); a username sent
 * as {@code username[]} is the username, as Spring MVC's {@code @RequestParam} takes it.
 */
@RestController
class LoginController {

	static final String PASSWORD = "correct-horse";

	@RateLimited("login")
	@PostMapping(path = "/api/login", consumes = MediaType.APPLICATION_FORM_URLENCODED_VALUE,
			produces = MediaType.TEXT_PLAIN_VALUE)
	Mono<ResponseEntity<String>> login(ServerWebExchange exchange) {
		return exchange.getFormData().map((form) -> {
			String username = first(form, "username");
			if (username == null || !PASSWORD.equals(first(form, "password"))) {
				return ResponseEntity.status(HttpStatus.UNAUTHORIZED).body("Wrong username or password");
			}
			return ResponseEntity.ok("Welcome, " + username);
		});
	}

	private static String first(MultiValueMap<String, String> form, String name) {
		String value = form.getFirst(name);
		return (value != null) ? value : form.getFirst(name + "[]");
	}

}
