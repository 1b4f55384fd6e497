package io.github.ratelimit.it;

import java.net.http.HttpResponse;
import java.util.concurrent.CompletionService;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorCompletionService;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import io.github.ratelimit.testsupport.Http;

import static io.github.ratelimit.it.RateLimitEndToEndTests.header;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Draft 6's header fields beside the legacy ones, and the bound on requests waiting in delay mode,
 * through a running server.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "rate-limit.headers.style=legacy, draft-6", "rate-limit.delay.max-waiting=3" })
class HeaderStyleAndWaitingBoundTests {

	@LocalServerPort
	int port;

	@Autowired
	RecordingDelay delay;

	Http http;

	@BeforeEach
	void client() {
		this.http = new Http(this.port);
	}

	@Test
	void draft6FieldsSayWhatTheLegacyOnesSayAndNoDraft11ListGoesWithThem() {
		HttpResponse<String> first = this.http.get("/t/inline");
		assertThat(header(first, "RateLimit-Limit")).isEqualTo("3").isEqualTo(header(first, "X-RateLimit-Limit"));
		assertThat(header(first, "RateLimit-Remaining")).isEqualTo("2").isEqualTo(header(first, "X-RateLimit-Remaining"));
		assertThat(header(first, "RateLimit-Reset")).isEqualTo("20").isEqualTo(header(first, "X-RateLimit-Reset"));
		assertThat(first.headers().firstValue("RateLimit")).isEmpty();
		assertThat(first.headers().firstValue("RateLimit-Policy")).isEmpty();
		this.http.get("/t/inline");
		this.http.get("/t/inline");
		HttpResponse<String> rejected = this.http.get("/t/inline");
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(header(rejected, "RateLimit-Remaining")).isEqualTo("0");
		assertThat(header(rejected, "RateLimit-Reset")).isEqualTo("60");
		assertThat(header(rejected, "Retry-After")).isEqualTo("20");
	}

	/**
	 * One request a second, waits of up to an hour, at most 3 waiting: of 7 simultaneous requests that
	 * would all wait, 3 wait and 4 are answered 429 at once, with the wait they would have had and the
	 * tokens they had reserved given back.
	 */
	@Test
	void beyondMaxWaitingRequestsAreRejectedAtOnceAndGiveBackTheirTokens() throws Exception {
		assertThat(this.http.get("/t/queued").statusCode()).isEqualTo(200);
		this.delay.waits.clear();
		this.delay.gate = new CountDownLatch(1);
		ExecutorService pool = Executors.newFixedThreadPool(7);
		try {
			CompletionService<HttpResponse<String>> responses = new ExecutorCompletionService<>(pool);
			for (int i = 0; i < 7; i++) {
				responses.submit(() -> this.http.get("/t/queued"));
			}
			for (int i = 0; i < 4; i++) {
				Future<HttpResponse<String>> done = responses.poll(60, TimeUnit.SECONDS);
				assertThat(done).as("a refused request is answered at once").isNotNull();
				HttpResponse<String> refused = done.get();
				assertThat(refused.statusCode()).isEqualTo(429);
				assertThat(refused.body()).contains("\"violated-policies\":[\"queued\"]");
				assertThat(Long.parseLong(header(refused, "Retry-After"))).isBetween(1L, 7L);
			}
			this.delay.gate.countDown();
			for (int i = 0; i < 3; i++) {
				assertThat(responses.poll(60, TimeUnit.SECONDS).get().statusCode()).isEqualTo(200);
			}
			assertThat(this.delay.waits).as("three waited").hasSize(3);
			this.delay.gate = null;
			// Only the three that waited hold turns: the next one waits 4 s, not 8 s.
			assertThat(this.http.get("/t/queued").statusCode()).isEqualTo(200);
			assertThat(this.delay.waits).hasSize(4).last().isEqualTo(4_000_000_000L);
		}
		finally {
			CountDownLatch gate = this.delay.gate;
			if (gate != null) {
				gate.countDown();
			}
			this.delay.gate = null;
			pool.shutdownNow();
		}
	}
}
