package io.github.ratelimit.it;

import java.net.http.HttpResponse;
import java.time.Duration;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.ApplicationContext;

import io.github.ratelimit.core.CaffeineRateLimitStore;
import io.github.ratelimit.test.ManualClock;
import io.github.ratelimit.testsupport.Http;
import io.github.ratelimit.web.servlet.ConfiguredPolicy;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * After a flood of junk usernames has filled the login policy's table (50 keys here), through a running
 * server: the table makes room by itself once the flood's states are fresh (nobody calls a clean-up), and
 * an operator's unlock reaches a user whom a full table judges by an overflow budget. The login policy
 * allows 3 failures a minute per username.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "rate-limit.store.caffeine.maximum-size=50",
				"management.endpoints.web.exposure.include=ratelimits" })
class FloodRecoveryTests {

	@LocalServerPort
	int port;

	@Autowired
	CaffeineRateLimitStore store;

	@Autowired
	ManualClock clock;

	@Autowired
	ApplicationContext context;

	Http http;

	@BeforeEach
	void client() {
		this.http = new Http(this.port);
	}

	@Test
	void aFullTableTracksNewUsersOnTheirOwnOnceTheFloodsStatesAreFresh() {
		flood("junk-");
		assertThat(this.store.size(loginId())).isEqualTo(50);

		// A minute and a second: every junk state is as good as fresh and may go. No request since.
		this.clock.advance(Duration.ofSeconds(62));
		for (int i = 0; i < 3; i++) {
			assertThat(login("zed", "wrong").statusCode()).isEqualTo(401);
		}
		assertThat(login("zed", "right").statusCode()).as("locked out").isEqualTo(429);
		assertThat(this.store.size(loginId())).as("the flood's states left; zed is tracked on its own").isEqualTo(1);
		assertThat(this.store.overflowDecisions(loginId())).as("zed was not judged by an overflow budget")
			.isEqualTo(this.overflowDecisionsOfTheFlood);

		HttpResponse<String> unlocked = this.http.delete("/actuator/ratelimits/login/param:zed");
		assertThat(unlocked.body()).contains("\"remaining\":3");
		assertThat(login("zed", "right").statusCode()).as("unlocked").isEqualTo(200);
	}

	@Test
	void anUnlockReachesAUserJudgedByAnOverflowBudgetDuringAFlood() {
		flood("flood-");
		int guesses = 0;
		while (login("yves", "wrong").statusCode() == 401) {
			guesses++;
		}
		assertThat(guesses).as("at most one budget of guesses, shared with the junk").isLessThanOrEqualTo(3);
		assertThat(this.store.size(loginId())).as("the table is still full; yves is not tracked").isEqualTo(50);

		HttpResponse<String> unlocked = this.http.delete("/actuator/ratelimits/login/param:yves");
		assertThat(unlocked.statusCode()).isEqualTo(200);
		assertThat(unlocked.body()).contains("\"remaining\":3");
		assertThat(login("yves", "right").statusCode()).as("unlocked").isEqualTo(200);
	}

	private long overflowDecisionsOfTheFlood;

	/** Sixty junk usernames, one failure each: fifty fill the table, ten are judged by overflow budgets. */
	private void flood(String prefix) {
		for (int i = 0; i < 60; i++) {
			assertThat(login(prefix + i, "wrong").statusCode()).isIn(401, 429);
		}
		this.overflowDecisionsOfTheFlood = this.store.overflowDecisions(loginId());
	}

	private HttpResponse<String> login(String user, String password) {
		return this.http.post("/ops/login", "user=" + user + "&password=" + password);
	}

	private String loginId() {
		return ConfiguredPolicy.annotated(this.context, "login").id();
	}
}
