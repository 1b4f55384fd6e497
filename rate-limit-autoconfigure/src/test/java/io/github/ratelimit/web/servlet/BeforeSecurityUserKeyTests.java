package io.github.ratelimit.web.servlet;

import java.nio.charset.StandardCharsets;
import java.util.Base64;

import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import io.github.ratelimit.it.TestApplication;
import io.github.ratelimit.testsupport.Http;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Ahead of Spring Security (the documented setup for guarding its login), a handler's
 * {@code key = "user"} is resolved on the request Spring MVC handles, where Security's request wrapper
 * tells the principal: not on the request the filter saw before Security wrapped it, where every user
 * would fall back to the client IP and alice's budget would be bob's.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "rate-limit.filter-order=-110" })
class BeforeSecurityUserKeyTests {

	@LocalServerPort
	int port;

	@Test
	void userKeysOfTheHandlerFollowThePrincipalAheadOfSpringSecurity() {
		Http http = new Http(this.port);
		String alice = basic("alice");
		assertThat(http.get("/t/user", "Authorization", alice).statusCode()).isEqualTo(200);
		assertThat(http.get("/t/user", "Authorization", alice).statusCode()).isEqualTo(200);
		assertThat(http.get("/t/user", "Authorization", alice).statusCode()).isEqualTo(429);
		// bob has a budget of his own, not alice's IP budget.
		assertThat(http.get("/t/user", "Authorization", basic("bob")).statusCode()).isEqualTo(200);
	}

	private static String basic(String user) {
		return "Basic " + Base64.getEncoder().encodeToString((user + ":secret").getBytes(StandardCharsets.UTF_8));
	}

}
