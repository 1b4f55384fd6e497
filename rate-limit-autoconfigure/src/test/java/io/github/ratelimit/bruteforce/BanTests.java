package io.github.ratelimit.bruteforce;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;

import io.github.ratelimit.testsupport.Http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * {@code ban} on a login form, through a running Tomcat: 2 failures per username an hour, and a username
 * that gets 2 lockout answers within the hour is banned for a day: refused at once, its budget not asked,
 * until the ban ends or an operator lifts it.
 */
@ExtendWith(OutputCaptureExtension.class)
@SpringBootTest(classes = BruteForceApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "management.endpoints.web.exposure.include=ratelimits",
				"rate-limit.policies.banned-login.limit=2", "rate-limit.policies.banned-login.period=1h",
				"rate-limit.policies.banned-login.key=param:username",
				"rate-limit.policies.banned-login.count=failures", "rate-limit.policies.banned-login.ban.after=2",
				"rate-limit.policies.banned-login.ban.duration=24h", "rate-limit.rules[0].path=/banned-login",
				"rate-limit.rules[0].policies=banned-login" })
class BanTests {

	private static final long DAY = Duration.ofDays(1).toSeconds();

	@LocalServerPort
	int port;

	@Autowired
	MeterRegistry meters;

	Http http;

	@BeforeEach
	void client() {
		this.http = new Http(this.port);
	}

	@Test
	void theSecondLockoutAnswerBansTheUsernameForADayUntilAnOperatorLiftsIt(CapturedOutput output) {
		double bannedBefore = count("banned");
		assertThat(attempt("ann", "wrong").statusCode()).isEqualTo(401);
		assertThat(attempt("ann", "wrong").statusCode()).isEqualTo(401);
		HttpResponse<String> lockout = attempt("ann", "right");
		assertThat(lockout.statusCode()).isEqualTo(429);
		assertThat(Long.parseLong(lockout.headers().firstValue("Retry-After").orElseThrow())).as("the budget's")
			.isLessThan(DAY);
		HttpResponse<String> started = attempt("ann", "right");
		assertThat(started.statusCode()).isEqualTo(429);
		assertThat(started.headers().firstValue("Retry-After")).as("the ban's").hasValue(Long.toString(DAY));
		assertThat(started.headers().firstValue("RateLimit")).hasValue("\"banned-login\";r=0;t=" + DAY);
		assertThat(started.body()).contains("\"violated-policies\":[\"banned-login\"]").contains("banned until");
		Instant until = Instant.parse(started.body().replaceAll(".*\"banned-until\":\"([^\"]+)\".*", "$1"));
		assertThat(until).isCloseTo(Instant.now().plus(Duration.ofDays(1)), within(Duration.ofSeconds(5)));
		for (int i = 0; i < 3; i++) {
			HttpResponse<String> banned = attempt("ann", "right");
			assertThat(banned.statusCode()).isEqualTo(429);
			assertThat(Long.parseLong(banned.headers().firstValue("Retry-After").orElseThrow()))
				.isBetween(DAY - 5, DAY);
		}
		assertThat(count("banned") - bannedBefore).isEqualTo(4);
		assertThat(output.getOut().split("banned param:ann for PT24H", -1)).as("logged once per ban").hasSize(2);
		assertThat(attempt("bob", "wrong").statusCode()).as("another username").isEqualTo(401);

		HttpResponse<String> shown = this.http.get("/actuator/ratelimits/banned-login/param:ann");
		assertThat(shown.body()).contains("\"bannedUntil\":");
		HttpResponse<String> lifted = this.http.delete("/actuator/ratelimits/banned-login/param:ann");
		assertThat(lifted.statusCode()).isEqualTo(200);
		assertThat(lifted.body()).contains("\"remaining\":2").doesNotContain("\"bannedUntil\":\"");
		assertThat(attempt("ann", "right").statusCode()).as("the ban lifted, the budget whole").isEqualTo(200);
	}

	@Test
	void lockoutAnswersOfAnotherUsernameDoNotCount() {
		for (int i = 0; i < 2; i++) {
			attempt("cleo", "wrong");
		}
		assertThat(attempt("cleo", "wrong").statusCode()).isEqualTo(429);
		for (int i = 0; i < 2; i++) {
			attempt("dora", "wrong");
		}
		assertThat(attempt("dora", "wrong").statusCode()).isEqualTo(429);
		HttpResponse<String> cleo = attempt("cleo", "wrong");
		assertThat(cleo.body()).as("cleo's second lockout answer starts her ban").contains("banned until");
		assertThat(attempt("dora", "wrong").body()).as("dora's too, not before").contains("banned until");
	}

	private HttpResponse<String> attempt(String username, String password) {
		return this.http.post("/banned-login", "username=" + username + "&password=" + password);
	}

	private double count(String outcome) {
		Counter counter = this.meters.find("ratelimit.decisions").tag("policy", "banned-login").tag("outcome", outcome)
			.counter();
		return (counter != null) ? counter.count() : 0;
	}

}
