package io.github.ratelimit.unreadable;

import java.util.Locale;
import java.util.Map;

import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RequestPart;
import org.springframework.web.bind.annotation.RestController;

import io.github.ratelimit.web.CountMode;
import io.github.ratelimit.web.RateLimited;

/**
 * Logins (3 failures a minute per account) keyed by what a client could try to make unreadable: a form
 * parameter, a header, a SpEL expression, a resolver bean, a multipart field; and endpoints of policies
 * with plans, exemptions and shadow limits (configured by the tests). The password {@code right} logs in.
 */
@RestController
@RequestMapping("/uk")
public class UnreadableKeysController {

	@PostMapping("/login")
	@RateLimited(name = "uk-login", limit = 3, period = "1m", key = "param:username", count = CountMode.FAILURES)
	ResponseEntity<String> login(@RequestParam String username, @RequestParam String password) {
		return answer(username, password);
	}

	@PostMapping("/header-login")
	@RateLimited(name = "uk-header", limit = 3, period = "1m", key = "header:X-User", count = CountMode.FAILURES)
	ResponseEntity<String> headerLogin(@RequestHeader(name = "X-User", required = false) String user,
			@RequestParam String password) {
		// As a case-insensitive user store that trims would take it.
		return (user == null || user.isBlank()) ? ResponseEntity.status(HttpStatus.UNAUTHORIZED).body("who?")
				: answer(user.strip().toLowerCase(Locale.ROOT), password);
	}

	@PostMapping("/token-login")
	@RateLimited(name = "uk-expr", limit = 3, period = "1m", key = "#{header('X-Token').substring(0, 8)}",
			count = CountMode.FAILURES)
	ResponseEntity<String> tokenLogin(@RequestHeader("X-Token") String token, @RequestParam String password) {
		return answer(token, password);
	}

	@PostMapping("/bean-login")
	@RateLimited(name = "uk-bean", limit = 3, period = "1m", key = "@ukTokenSubject", count = CountMode.FAILURES)
	ResponseEntity<String> beanLogin(@RequestHeader("X-Token") String token, @RequestParam String password) {
		return answer(token, password);
	}

	@PostMapping(path = "/multipart-login", consumes = MediaType.MULTIPART_FORM_DATA_VALUE)
	@RateLimited(name = "uk-multipart", limit = 3, period = "1m", key = "param:username", count = CountMode.FAILURES)
	ResponseEntity<String> multipartLogin(@RequestPart("username") String username,
			@RequestPart("password") String password) {
		return answer(username, password);
	}

	@PostMapping(path = "/json-login", consumes = MediaType.APPLICATION_JSON_VALUE)
	@RateLimited(name = "uk-json", limit = 3, period = "1m", key = "param:username", count = CountMode.FAILURES)
	ResponseEntity<String> jsonLogin(@RequestBody Map<String, String> body) {
		return answer(body.get("username"), body.get("password"));
	}

	@PostMapping("/mixed")
	String mixed() {
		return "mixed";
	}

	@GetMapping("/plan")
	String plan() {
		return "plan";
	}

	@GetMapping("/exempt")
	String exempt() {
		return "exempt";
	}

	private static ResponseEntity<String> answer(String user, String password) {
		return "right".equals(password) ? ResponseEntity.ok("welcome " + user)
				: ResponseEntity.status(HttpStatus.UNAUTHORIZED).body("no");
	}
}
