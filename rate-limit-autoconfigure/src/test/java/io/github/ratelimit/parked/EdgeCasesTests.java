package io.github.ratelimit.parked;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.context.request.async.DeferredResult;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.CaffeineRateLimitStore;
import io.github.ratelimit.core.Decision;
import io.github.ratelimit.core.RateLimitClock;
import io.github.ratelimit.core.RateLimitStore;
import io.github.ratelimit.core.Receipt;
import io.github.ratelimit.test.ManualClock;
import io.github.ratelimit.testsupport.Http;
import io.github.ratelimit.web.RequestDelay;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Review of delay mode's edge cases, each followed by a request that shows nothing leaked: a handler that
 * throws after its wait, a 404 under a delayed rule, an async controller that times out after its wait
 * (a concurrency slot and the one place of {@code max-waiting=1} must come back each time), a timer
 * ({@link RequestDelay}) that throws, and a store whose step never completes.
 */
class EdgeCasesTests {

	/** The clock stands still; the timer resumes at once, or throws while {@link #throwing}. */
	@TestConfiguration(proxyBeanMethods = false)
	@Import(Timer.EdgeController.class)
	static class Timer implements RequestDelay {

		final List<Long> nanos = new CopyOnWriteArrayList<>();

		final AtomicBoolean throwing = new AtomicBoolean();

		@Bean
		ManualClock rateLimitClock() {
			return new ManualClock();
		}

		@Override
		public void schedule(long nanos, Runnable resume) {
			if (this.throwing.get()) {
				throw new RejectedExecutionException("the timer is shut down");
			}
			this.nanos.add(nanos);
			resume.run();
		}

		/** Nested in a test configuration, so that component scanning of the other tests skips it. */
		@RestController
		static class EdgeController {

			@GetMapping("/waiting/edge/ok")
			String ok() {
				return "ok";
			}

			@GetMapping("/waiting/edge/boom")
			String boom() {
				throw new IllegalStateException("boom after the wait");
			}

			@GetMapping("/waiting/edge/never")
			DeferredResult<String> never() {
				return new DeferredResult<>(100L);
			}

		}

	}

	/**
	 * One global delayed budget (every request after the first waits), one concurrency slot, and one
	 * waiting place for the whole application.
	 */
	@SpringBootTest(classes = ParkedApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
			properties = { "rate-limit.rules[0].path=/waiting/**", "rate-limit.rules[0].policies=slots,waiting",
					"rate-limit.policies.slots.algorithm=concurrency", "rate-limit.policies.slots.limit=1",
					"rate-limit.policies.slots.key=global", "rate-limit.policies.waiting.limit=1",
					"rate-limit.policies.waiting.period=10ms", "rate-limit.policies.waiting.key=global",
					"rate-limit.policies.waiting.on-limit=delay", "rate-limit.policies.waiting.max-delay=1h",
					"rate-limit.delay.max-waiting=1", "rate-limit.delay.park=true" })
	@Import(Timer.class)
	static class NothingLeaksTests {

		@LocalServerPort
		int port;

		@Autowired
		Timer timer;

		Http http;

		@BeforeEach
		void spendTheBurst() {
			this.timer.throwing.set(false);
			this.http = new Http(this.port);
			this.http.get("/waiting/edge/ok");
		}

		@AfterEach
		void timerWorks() {
			this.timer.throwing.set(false);
		}

		/** A delayed request that must be served: its slot and its waiting place came back. */
		void nextDelayedRequestIsServed(String after) {
			for (int i = 0; i < 3; i++) {
				int before = this.timer.nanos.size();
				HttpResponse<String> response = this.http.get("/waiting/edge/ok");
				assertThat(response.statusCode()).as("request %d after %s; body %s", i, after, response.body())
					.isEqualTo(200);
				assertThat(this.timer.nanos.size()).as("it waited").isEqualTo(before + 1);
			}
		}

		@Test
		void aHandlerThatThrowsAfterItsWait() {
			for (int i = 0; i < 3; i++) {
				assertThat(this.http.get("/waiting/edge/boom").statusCode()).isEqualTo(500);
			}
			nextDelayedRequestIsServed("handlers that threw");
		}

		@Test
		void aNotFoundUnderADelayedRule() {
			for (int i = 0; i < 3; i++) {
				assertThat(this.http.get("/waiting/edge/missing").statusCode()).isEqualTo(404);
			}
			nextDelayedRequestIsServed("404s");
		}

		@Test
		void anAsyncControllerThatTimesOutAfterItsWait() {
			for (int i = 0; i < 3; i++) {
				assertThat(this.http.get("/waiting/edge/never").statusCode()).isEqualTo(503);
			}
			nextDelayedRequestIsServed("async timeouts");
		}

		/**
		 * A RequestDelay that throws (a custom timer shut down, rejecting): the request was admitted and
		 * parked; the client should not get a 500 for the limiter's own timer (it fails open on a store
		 * failure), and its place and slot must come back.
		 */
		@Test
		void aTimerThatThrowsLeaksNothing() {
			this.timer.throwing.set(true);
			for (int i = 0; i < 3; i++) {
				this.http.get("/waiting/edge/ok");
			}
			this.timer.throwing.set(false);
			nextDelayedRequestIsServed("timer failures");
		}

		@Test
		void aTimerThatThrowsDoesNotAnswer500() {
			this.timer.throwing.set(true);
			HttpResponse<String> response = this.http.get("/waiting/edge/ok");
			assertThat(response.statusCode()).as("body %s", response.body()).isEqualTo(200);
		}

	}

}
