package io.github.ratelimit.bruteforce;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.http.MediaType;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.MvcResult;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;

/**
 * A flood of 20,000 junk usernames against a login policy whose table tracks at most 1,000 keys, sent
 * through the filter so that each is resolved as {@code param:username}: a ban and a lockout that stood
 * before the flood still stand after it, and a junk username gets no more than one budget.
 */
@SpringBootTest(classes = BruteForceApplication.class,
		properties = { "rate-limit.store.caffeine.maximum-size=1000",
				"rate-limit.policies.banned-login.limit=2", "rate-limit.policies.banned-login.period=1h",
				"rate-limit.policies.banned-login.key=param:username",
				"rate-limit.policies.banned-login.count=failures", "rate-limit.policies.banned-login.ban.after=2",
				"rate-limit.policies.banned-login.ban.duration=24h", "rate-limit.rules[0].path=/banned-login",
				"rate-limit.rules[0].policies=banned-login" })
@AutoConfigureMockMvc
class BanFloodTests {

	private static final int FLOOD = 20_000;

	@Autowired
	MockMvc mvc;

	@Test
	void aFloodOfJunkUsernamesLiftsNeitherABanNorALockout() throws Exception {
		for (int i = 0; i < 2; i++) {
			assertThat(attempt("eve", "wrong").getResponse().getStatus()).isEqualTo(401);
			assertThat(attempt("fay", "wrong").getResponse().getStatus()).isEqualTo(401);
		}
		assertThat(attempt("eve", "right").getResponse().getStatus()).as("eve's lockout").isEqualTo(429);
		assertThat(attempt("eve", "right").getResponse().getContentAsString()).as("eve's ban").contains("banned until");
		assertThat(attempt("fay", "right").getResponse().getStatus()).as("fay's lockout").isEqualTo(429);

		ExecutorService senders = Executors.newFixedThreadPool(4);
		try {
			List<Future<Integer>> statuses = new ArrayList<>(FLOOD);
			for (int i = 0; i < FLOOD; i++) {
				String junk = "junk" + i;
				statuses.add(senders.submit(() -> attempt(junk, "wrong").getResponse().getStatus()));
			}
			for (Future<Integer> status : statuses) {
				assertThat(status.get()).as("a junk username's first failure, never a 500").isIn(401, 429);
			}
		}
		finally {
			senders.shutdownNow();
		}

		MvcResult eve = attempt("eve", "right");
		assertThat(eve.getResponse().getStatus()).isEqualTo(429);
		assertThat(eve.getResponse().getContentAsString()).as("eve is still banned").contains("banned until");
		assertThat(attempt("fay", "right").getResponse().getStatus()).as("fay is still locked out").isEqualTo(429);
		int allowed = 0;
		for (int i = 0; i < 5; i++) {
			if (attempt("junk7", "wrong").getResponse().getStatus() == 401) {
				allowed++;
			}
		}
		assertThat(allowed).as("a junk username's failures after the flood, within one budget").isLessThanOrEqualTo(1);
	}

	private MvcResult attempt(String username, String password) throws Exception {
		return this.mvc.perform(post("/banned-login").contentType(MediaType.APPLICATION_FORM_URLENCODED)
			.content("username=" + username + "&password=" + password)).andReturn();
	}

}
