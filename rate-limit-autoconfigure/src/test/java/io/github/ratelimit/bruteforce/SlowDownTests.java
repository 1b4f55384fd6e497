package io.github.ratelimit.bruteforce;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

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

import io.github.ratelimit.testsupport.AtOnce;
import io.github.ratelimit.testsupport.Http;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code slow-down} on a login form, through a running Tomcat on the wall clock: 5 failures per username
 * in 15 minutes, slowed down once 2 are spent (200 ms, then 400 ms, then at most 600 ms), then locked out.
 * Waiting requests are parked (by default: every filter sees async dispatches). A delay is measured as
 * "the attempt did not complete before it"; an attempt at full speed, and a lockout, as "not counted
 * {@code slowed}" (no upper bound on the wall clock: a loaded machine answers late). On {@code /login-one}
 * the delay is 2 s, so that another request surely arrives while one waits, and a global slot is held by one
 * request at a time. The shadow policy would delay by 10 s: an attempt answered sooner was not delayed.
 */
@ExtendWith(OutputCaptureExtension.class)
@SpringBootTest(classes = BruteForceApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "server.tomcat.threads.max=64",
				"management.endpoints.web.exposure.include=ratelimits",
				"rate-limit.policies.login.limit=5", "rate-limit.policies.login.period=15m",
				"rate-limit.policies.login.key=param:username", "rate-limit.policies.login.count=failures",
				"rate-limit.policies.login.slow-down.after=2", "rate-limit.policies.login.slow-down.delay=200ms",
				"rate-limit.policies.login.slow-down.max-delay=600ms",
				"rate-limit.policies.shadow-login.limit=5", "rate-limit.policies.shadow-login.period=15m",
				"rate-limit.policies.shadow-login.key=param:username", "rate-limit.policies.shadow-login.count=failures",
				"rate-limit.policies.shadow-login.shadow=true", "rate-limit.policies.shadow-login.slow-down.after=2",
				"rate-limit.policies.shadow-login.slow-down.delay=10s",
				"rate-limit.policies.shadow-login.slow-down.max-delay=10s",
				"rate-limit.policies.login-long.limit=5", "rate-limit.policies.login-long.period=15m",
				"rate-limit.policies.login-long.key=param:username", "rate-limit.policies.login-long.count=failures",
				"rate-limit.policies.login-long.slow-down.after=2", "rate-limit.policies.login-long.slow-down.delay=2s",
				"rate-limit.policies.login-long.slow-down.max-delay=2s",
				"rate-limit.policies.one-at-a-time.algorithm=concurrency", "rate-limit.policies.one-at-a-time.limit=1",
				"rate-limit.policies.one-at-a-time.key=global",
				"rate-limit.rules[0].path=/login", "rate-limit.rules[0].policies=login",
				"rate-limit.rules[1].path=/shadow-login", "rate-limit.rules[1].policies=shadow-login",
				"rate-limit.rules[2].path=/login-one", "rate-limit.rules[2].policies=login-long,one-at-a-time",
				"rate-limit.policies.login-lock.limit=3", "rate-limit.policies.login-lock.period=15m",
				"rate-limit.policies.login-lock.key=param:username", "rate-limit.policies.login-lock.count=failures",
				"rate-limit.policies.login-lock.slow-down.after=2", "rate-limit.policies.login-lock.slow-down.delay=10s",
				"rate-limit.policies.login-lock.slow-down.max-delay=10s",
				"rate-limit.rules[3].path=/login-lock", "rate-limit.rules[3].policies=login-lock" })
class SlowDownTests {

	private static final long FIRST_DELAY = 200;

	private static final long LONG_DELAY = 2000;

	private static final long SHADOW_DELAY = 10_000;

	private static final long LOCK_DELAY = 10_000;

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
	void failedAttemptsAreSlowedDownThenLockedOutAtOnce(CapturedOutput output) {
		double slowedBefore = count("login", "slowed");
		Timed first = attempt("/login", "ann", "wrong");
		Timed second = attempt("/login", "ann", "wrong");
		assertThat(List.of(first.status(), second.status())).containsExactly(401, 401);
		assertThat(count("login", "slowed") - slowedBefore).as("two failures at full speed").isZero();
		Timed third = attempt("/login", "ann", "wrong");
		assertThat(third.status()).isEqualTo(401);
		assertThat(third.millis()).as("after 2 failures").isGreaterThanOrEqualTo(FIRST_DELAY);
		assertThat(third.response().headers().firstValue("X-RateLimit-Remaining")).as("the usual headers").hasValue("2");
		Timed fourth = attempt("/login", "ann", "wrong");
		assertThat(fourth.status()).isEqualTo(401);
		assertThat(fourth.millis()).as("after 3 failures, doubled").isGreaterThanOrEqualTo(2 * FIRST_DELAY);
		Timed fifth = attempt("/login", "ann", "wrong");
		assertThat(fifth.status()).isEqualTo(401);
		assertThat(fifth.millis()).as("after 4 failures: at most max-delay").isGreaterThanOrEqualTo(3 * FIRST_DELAY);
		Timed locked = attempt("/login", "ann", "right");
		assertThat(locked.status()).isEqualTo(429);
		assertThat(count("login", "slowed") - slowedBefore).isEqualTo(3);
		assertThat(output).contains("Rate limit 'login' slowed down param:ann by PT0.2S");
		Timed other = attempt("/login", "bob", "wrong");
		assertThat(other.status()).isEqualTo(401);
		assertThat(count("login", "slowed") - slowedBefore).as("another username is not slowed").isEqualTo(3);
	}

	@Test
	void aLockoutIsAnsweredWhileAnEarlierAttemptStillWaitsItsTurn() throws Exception {
		attempt("/login-lock", "lena", "wrong");
		attempt("/login-lock", "lena", "wrong");
		// The third attempt takes the last unit and waits 10 s; the fourth finds the budget spent.
		double before = count("login-lock", "slowed");
		CompletableFuture<Timed> slowed = CompletableFuture.supplyAsync(() -> attempt("/login-lock", "lena", "wrong"));
		awaitSlowed("login-lock", before);
		Timed locked = attempt("/login-lock", "lena", "wrong");
		assertThat(locked.status()).isEqualTo(429);
		assertThat(slowed).as("the lockout came while the slowed attempt still waited: never delayed").isNotDone();
		assertThat(locked.millis()).as("well before the 10 s a slowed attempt waits").isLessThan(LOCK_DELAY / 2);
	}

	@Test
	void aRightPasswordAfterTwoFailuresWaitsThenLogsInAndSpendsNothing() {
		attempt("/login", "cleo", "wrong");
		attempt("/login", "cleo", "wrong");
		Timed right = attempt("/login", "cleo", "right");
		assertThat(right.status()).isEqualTo(200);
		assertThat(right.millis()).isGreaterThanOrEqualTo(FIRST_DELAY);
		assertThat(right.response().headers().firstValue("X-RateLimit-Remaining")).as("given back").hasValue("3");
	}

	@Test
	void twentyParallelAttemptsAreSlowedAndLockedOutAsIfTheyCameOneByOne() throws Exception {
		double slowedBefore = count("login", "slowed");
		List<Timed> answers = Collections.synchronizedList(new ArrayList<>());
		Map<Integer, Integer> statuses = AtOnce.statuses(20, (i) -> () -> {
			Timed timed = attempt("/login", "carl", "wrong");
			answers.add(timed);
			return timed.status();
		});
		assertThat(statuses).containsExactlyInAnyOrderEntriesOf(Map.of(401, 5, 429, 15));
		List<Long> failures = answers.stream().filter((timed) -> timed.status() == 401).map(Timed::millis).sorted().toList();
		assertThat(failures.get(2)).isGreaterThanOrEqualTo(FIRST_DELAY);
		assertThat(failures.get(3)).isGreaterThanOrEqualTo(2 * FIRST_DELAY);
		assertThat(failures.get(4)).isGreaterThanOrEqualTo(3 * FIRST_DELAY);
		assertThat(count("login", "slowed") - slowedBefore).as("3 slowed").isEqualTo(3);
	}

	@Test
	void aShadowPolicyNeverDelaysButCountsAndLogsTheDelayItWouldHaveMade(CapturedOutput output) {
		double slowedBefore = count("shadow-login", "slowed");
		for (int i = 0; i < 4; i++) {
			Timed timed = attempt("/shadow-login", "dave", "wrong");
			assertThat(timed.status()).isEqualTo(401);
			assertThat(timed.millis()).isLessThan(SHADOW_DELAY);
		}
		assertThat(count("shadow-login", "slowed") - slowedBefore).isEqualTo(2);
		assertThat(output).contains("Shadow rate limit 'shadow-login' would have slowed down param:dave by PT10S");
	}

	@Test
	void aWaitingRequestHoldsNoSlotOfAnotherPolicy() throws Exception {
		attempt("/login-one", "erin", "wrong");
		attempt("/login-one", "erin", "wrong");
		double before = count("login-long", "slowed");
		CompletableFuture<Timed> slowed = CompletableFuture.supplyAsync(() -> attempt("/login-one", "erin", "wrong"));
		awaitSlowed("login-long", before);
		Timed other = attempt("/login-one", "fred", "wrong");
		assertThat(other.status()).as("the one slot is free while erin waits").isEqualTo(401);
		assertThat(slowed.get(10, TimeUnit.SECONDS).status()).as("erin takes the slot again after the wait").isEqualTo(401);
	}

	@Test
	void aRequestWhoseSlotIsTakenWhenItsTurnComesGetsItsLockoutAndGivesItsAttemptBack() throws Exception {
		attempt("/login-one", "gina", "wrong");
		attempt("/login-one", "gina", "wrong");
		double before = count("login-long", "slowed");
		CompletableFuture<Timed> slowed = CompletableFuture.supplyAsync(() -> attempt("/login-one", "gina", "wrong"));
		awaitSlowed("login-long", before);
		CompletableFuture<Timed> holder = CompletableFuture
			.supplyAsync(() -> attempt("/login-one", "hank", "wrong&slowMillis=" + (2 * LONG_DELAY)));
		Timed refused = slowed.get(10, TimeUnit.SECONDS);
		assertThat(refused.status()).as("the slot is hank's when gina's turn comes").isEqualTo(429);
		assertThat(refused.response().headers().firstValue("Retry-After")).hasValue("1");
		assertThat(holder.get(10, TimeUnit.SECONDS).status()).isEqualTo(401);
		assertThat(this.http.get("/actuator/ratelimits/login-long/param:gina").body())
			.as("the refused attempt was given back: 2 failures spent").contains("\"remaining\":3");
	}

	@Test
	void aRuntimeChangeThatLeavesNothingToSlowDownIsAnswered400() {
		HttpResponse<String> refused = this.http.postJson("/actuator/ratelimits/login", "{\"limit\": 2}");
		assertThat(refused.statusCode()).isEqualTo(400);
		assertThat(refused.body()).contains("rate-limit.policies.login.burst")
			.contains("the burst (2) would be no more than slow-down.after (2)");
		assertThat(this.http.get("/actuator/ratelimits/login").body()).contains("\"limit\":5");
	}

	/** Waits (at most 10 s) until a request of the policy was slowed down (its wait started) since {@code before}. */
	private void awaitSlowed(String policy, double before) throws InterruptedException {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
		while (count(policy, "slowed") == before) {
			assertThat(System.nanoTime()).as("a request of %s slowed down", policy).isLessThan(deadline);
			Thread.sleep(5);
		}
	}

	private Timed attempt(String path, String username, String password) {
		long start = System.nanoTime();
		HttpResponse<String> response = this.http.post(path, "username=" + username + "&password=" + password);
		return new Timed(response, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
	}

	private double count(String policy, String outcome) {
		Counter counter = this.meters.find("ratelimit.decisions").tag("policy", policy).tag("outcome", outcome).counter();
		return (counter != null) ? counter.count() : 0;
	}

	record Timed(HttpResponse<String> response, long millis) {

		int status() {
			return this.response.statusCode();
		}

	}

}
