package io.github.ratelimit.it;

import java.net.http.HttpResponse;
import java.time.Duration;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import io.github.ratelimit.test.ManualClock;
import io.github.ratelimit.testsupport.Http;

import static io.github.ratelimit.it.RateLimitEndToEndTests.header;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every algorithm, and delay mode, through a running server.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT)
class AlgorithmEndToEndTests {

	@LocalServerPort
	int port;

	@Autowired
	ManualClock clock;

	@Autowired
	RecordingDelay delay;

	Http http;

	@BeforeEach
	void client() {
		this.http = new Http(this.port);
	}

	@ParameterizedTest
	@ValueSource(strings = { "token-bucket", "fixed-window", "sliding-window-log", "sliding-window-counter",
			"leaky-bucket" })
	void eachAlgorithmLimitsAndAnswers429WithARetryAfterThatWorks(String algorithm) {
		String path = "/algo/" + algorithm;
		for (int remaining = 2; remaining >= 0; remaining--) {
			HttpResponse<String> response = this.http.get(path);
			assertThat(response.statusCode()).isEqualTo(200);
			assertThat(header(response, "X-RateLimit-Remaining")).isEqualTo(Integer.toString(remaining));
			assertThat(header(response, "RateLimit-Policy")).isEqualTo("\"AlgorithmController." + camel(algorithm)
					+ "\";q=3;w=60");
		}
		HttpResponse<String> rejected = this.http.get(path);
		assertThat(rejected.statusCode()).isEqualTo(429);
		long retryAfter = Long.parseLong(header(rejected, "Retry-After"));
		// a window counter may wait past the window: the current count weighs on the next
		assertThat(retryAfter).isBetween(1L, 120L);
		// t is the time until additional quota (draft 10/11), never later than Retry-After
		String state = header(rejected, "RateLimit");
		long t = Long.parseLong(state.substring(state.indexOf(";t=") + 3));
		assertThat(t).isBetween(1L, retryAfter);
		if (algorithm.endsWith("bucket")) {
			assertThat(t).as("the next token, a third of the minute").isEqualTo(20);
			assertThat(header(rejected, "X-RateLimit-Reset")).as("until full").isEqualTo("60");
		}
		this.clock.advance(Duration.ofSeconds(retryAfter));
		assertThat(this.http.get(path).statusCode()).as("retried after %d s", retryAfter).isEqualTo(200);
	}

	@Test
	void theLeakyBucketInDelayModeSpacesSimultaneousRequestsAtItsDrainRate() {
		this.delay.waits.clear();
		for (int i = 0; i < 5; i++) {
			HttpResponse<String> response = this.http.get("/algo/smooth");
			assertThat(response.statusCode()).isEqualTo(200);
			assertThat(response.body()).isEqualTo("smooth");
		}
		// one every 250 ms: the first at once, the fifth a second later
		assertThat(this.delay.waits).containsExactly(250_000_000L, 500_000_000L, 750_000_000L, 1_000_000_000L);
		HttpResponse<String> rejected = this.http.get("/algo/smooth");
		assertThat(rejected.statusCode()).as("its turn is further than max-delay").isEqualTo(429);
		assertThat(this.delay.waits).as("rejected without waiting").hasSize(4);
		assertThat(header(rejected, "Retry-After")).isEqualTo("1");
	}

	@Test
	void theTokenBucketInDelayModeServesTheBurstThenReservesTurns() {
		this.delay.waits.clear();
		assertThat(this.http.get("/algo/reserve").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/algo/reserve").statusCode()).isEqualTo(200);
		assertThat(this.delay.waits).isEmpty();
		assertThat(this.http.get("/algo/reserve").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/algo/reserve").statusCode()).isEqualTo(200);
		assertThat(this.delay.waits).containsExactly(5_000_000_000L, 10_000_000_000L);
		assertThat(this.http.get("/algo/reserve").statusCode()).isEqualTo(429);
	}

	private static String camel(String algorithm) {
		StringBuilder name = new StringBuilder();
		for (String part : algorithm.split("-")) {
			name.append(name.isEmpty() ? part : Character.toUpperCase(part.charAt(0)) + part.substring(1));
		}
		return name.toString();
	}
}
