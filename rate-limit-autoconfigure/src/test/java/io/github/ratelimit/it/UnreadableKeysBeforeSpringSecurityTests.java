package io.github.ratelimit.it;

import java.net.http.HttpResponse;

import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import io.github.ratelimit.testsupport.Http;
import io.github.ratelimit.unreadable.UnreadableKeysController;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Ahead of Spring Security, a path rule keyed by a parameter is decided in the filter, before any other
 * filter reads the parameters: parameters that cannot be decoded are refused there, and a locked-out
 * account stays locked out from every client IP.
 */
@SpringBootTest(classes = { TestApplication.class, UnreadableKeysController.class, UnreadableKeysTests.Beans.class },
		webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "rate-limit.filter-order=-110", "rate-limit.client-ip.trusted-proxies=127.0.0.1",
				"rate-limit.rules[0].path=/uk/login", "rate-limit.rules[0].policies=form-guesses",
				"rate-limit.policies.form-guesses.limit=3", "rate-limit.policies.form-guesses.period=1m",
				"rate-limit.policies.form-guesses.key=param:username",
				"rate-limit.policies.form-guesses.count=failures" })
class UnreadableKeysBeforeSpringSecurityTests {

	@LocalServerPort
	int port;

	@Test
	void undecodableParametersAreRefusedUpFrontAndALockoutHolds() {
		Http http = new Http(this.port);
		for (int i = 0; i < 3; i++) {
			assertThat(http.post("/uk/login", "username=fvictim&password=wrong", "X-Forwarded-For", "198.51.100.60")
				.statusCode()).isEqualTo(401);
		}
		for (String attacker : new String[] { "198.51.100.61", "198.51.100.62", "198.51.100.63" }) {
			for (String junk : new String[] { "x=%FF", "x=%ZZ", "%FF=1" }) {
				HttpResponse<String> response = http.post("/uk/login", "username=fvictim&password=guess&" + junk,
						"X-Forwarded-For", attacker);
				assertThat(response.statusCode()).as(junk + " from " + attacker).isEqualTo(400);
				assertThat(response.body()).contains("'form-guesses'");
			}
			assertThat(http.post("/uk/login", "username=fvictim&password=right", "X-Forwarded-For", attacker)
				.statusCode()).isEqualTo(429);
		}
	}
}
