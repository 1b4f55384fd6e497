package io.github.ratelimit.client;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.SplittableRandom;
import java.util.random.RandomGenerator;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.http.HttpMethod;
import org.springframework.http.client.ClientHttpResponse;
import org.springframework.mock.http.client.MockClientHttpRequest;
import org.springframework.util.StreamUtils;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class RetryAfterInterceptorTests {

	private static final Instant NOW = Instant.parse("2026-03-01T12:00:00Z");

	private static final byte[] NO_BODY = new byte[0];

	private final RecordingSleeper sleeper = new RecordingSleeper();

	private final RetryAfterInterceptor.Builder builder = RetryAfterInterceptor.builder()
		.sleeper(this.sleeper)
		.clock(Clock.fixed(NOW, ZoneOffset.UTC))
		.random(fixedRandom(0.0));

	@AfterEach
	void clearInterrupt() {
		Thread.interrupted();
	}

	@Test
	void retriesA429AfterTheRetryAfterSeconds() throws IOException {
		ScriptedExecution execution = new ScriptedExecution(FakeResponse.of(429, "Retry-After", "2"),
				FakeResponse.of(200));
		ClientHttpResponse response = send(this.builder.build(), HttpMethod.GET, execution);
		assertThat(response.getStatusCode().value()).isEqualTo(200);
		assertThat(this.sleeper.sleeps()).containsExactly(Duration.ofSeconds(2));
		assertThat(execution.count()).isEqualTo(2);
	}

	@Test
	void closesTheResponsesItDiscardsAfterReadingThemAndLeavesTheLastOneOpen() throws IOException {
		ScriptedExecution execution = new ScriptedExecution(FakeResponse.of(429, "Retry-After", "1"),
				FakeResponse.of(429, "Retry-After", "1"), FakeResponse.of(200));
		ClientHttpResponse response = send(this.builder.build(), HttpMethod.GET, execution);
		List<FakeResponse> returned = execution.returned();
		assertThat(returned).hasSize(3);
		assertThat(returned.get(0).isClosed()).isTrue();
		assertThat(returned.get(0).isBodyRead()).isTrue();
		assertThat(returned.get(1).isClosed()).isTrue();
		assertThat(returned.get(2).isClosed()).isFalse();
		assertThat(response).isSameAs(returned.get(2));
	}

	@Test
	void takesAnHttpDateRelativeToTheResponsesDateHeader() throws IOException {
		// the local clock is an hour off; the server's own Date decides
		Instant serverNow = NOW.plusSeconds(3600);
		ScriptedExecution execution = new ScriptedExecution(
				FakeResponse.of(429, "Date", httpDate(serverNow), "Retry-After", httpDate(serverNow.plusSeconds(3))),
				FakeResponse.of(200));
		send(this.builder.build(), HttpMethod.GET, execution);
		assertThat(this.sleeper.sleeps()).containsExactly(Duration.ofSeconds(3));
	}

	@Test
	void takesAnHttpDateRelativeToTheClockWithoutADateHeader() throws IOException {
		ScriptedExecution execution = new ScriptedExecution(
				FakeResponse.of(429, "Retry-After", httpDate(NOW.plusSeconds(4))), FakeResponse.of(200));
		send(this.builder.build(), HttpMethod.GET, execution);
		assertThat(this.sleeper.sleeps()).containsExactly(Duration.ofSeconds(4));
	}

	@Test
	void takesAnHttpDateRelativeToTheClockWhenTheDateHeaderIsInvalid() throws IOException {
		ScriptedExecution execution = new ScriptedExecution(
				FakeResponse.of(429, "Date", "yesterday", "Retry-After", httpDate(NOW.plusSeconds(4))),
				FakeResponse.of(200));
		send(this.builder.build(), HttpMethod.GET, execution);
		assertThat(this.sleeper.sleeps()).containsExactly(Duration.ofSeconds(4));
	}

	@Test
	void retriesAtOnceForAnHttpDateInThePast() throws IOException {
		ScriptedExecution execution = new ScriptedExecution(
				FakeResponse.of(429, "Retry-After", httpDate(NOW.minusSeconds(30))), FakeResponse.of(200));
		assertThat(send(this.builder.build(), HttpMethod.GET, execution).getStatusCode().value()).isEqualTo(200);
		assertThat(this.sleeper.sleeps()).containsExactly(Duration.ZERO);
	}

	@Test
	void backsOffExponentiallyWithoutRetryAfterAtTheLowestJitter() throws IOException {
		ScriptedExecution execution = new ScriptedExecution(FakeResponse.of(429));
		send(this.builder.maxAttempts(6)
			.baseDelay(Duration.ofMillis(100))
			.maxDelay(Duration.ofMillis(500))
			.maxTotalWait(Duration.ofSeconds(10))
			.build(), HttpMethod.GET, execution);
		// min(max, base * 2^retry) * 0.5
		assertThat(this.sleeper.sleeps()).containsExactly(Duration.ofMillis(50), Duration.ofMillis(100),
				Duration.ofMillis(200), Duration.ofMillis(250), Duration.ofMillis(250));
		assertThat(execution.count()).isEqualTo(6);
	}

	@Test
	void backsOffExponentiallyWithoutRetryAfterAtTheHighestJitter() throws IOException {
		ScriptedExecution execution = new ScriptedExecution(FakeResponse.of(429));
		send(this.builder.random(fixedRandom(Math.nextDown(1.0)))
			.maxAttempts(6)
			.baseDelay(Duration.ofMillis(100))
			.maxDelay(Duration.ofMillis(500))
			.maxTotalWait(Duration.ofSeconds(10))
			.build(), HttpMethod.GET, execution);
		assertThat(this.sleeper.sleeps()).hasSize(5);
		long[] ceilings = { 100, 200, 400, 500, 500 };
		for (int i = 0; i < ceilings.length; i++) {
			assertThat(this.sleeper.sleeps().get(i)).isLessThan(Duration.ofMillis(ceilings[i]))
				.isGreaterThan(Duration.ofMillis(ceilings[i] - 1));
		}
	}

	@Test
	void jitterStaysBetweenHalfAndAllOfTheExponentialDelay() {
		RetryAfterInterceptor interceptor = this.builder.random(new SplittableRandom(42))
			.baseDelay(Duration.ofMillis(100))
			.maxDelay(Duration.ofSeconds(1))
			.build();
		for (int retry = 0; retry < 8; retry++) {
			long ceiling = Math.min(1000, 100L << retry);
			for (int i = 0; i < 1000; i++) {
				Duration delay = interceptor.backoff(retry);
				assertThat(delay).isGreaterThanOrEqualTo(Duration.ofMillis(ceiling / 2))
					.isLessThan(Duration.ofMillis(ceiling));
			}
		}
	}

	@Test
	void backoffDoesNotOverflow() {
		RetryAfterInterceptor interceptor = this.builder.random(fixedRandom(0.0))
			.baseDelay(Duration.ofDays(365 * 1000))
			.maxDelay(Duration.ofDays(365 * 2000))
			.build();
		for (int retry : new int[] { 0, 1, 10, 62, 63, 64, 1000, Integer.MAX_VALUE }) {
			assertThat(interceptor.backoff(retry)).isPositive().isLessThanOrEqualTo(Duration.ofDays(365 * 2000));
		}
		assertThat(this.builder.baseDelay(Duration.ofNanos(1)).maxDelay(Duration.ofSeconds(1)).build().backoff(40))
			.isEqualTo(Duration.ofMillis(500));
	}

	@Test
	void stopsAfterMaxAttemptsAndReturnsTheLast429() throws IOException {
		ScriptedExecution execution = new ScriptedExecution(FakeResponse.of(429, "Retry-After", "1"));
		ClientHttpResponse response = send(this.builder.maxAttempts(3).build(), HttpMethod.GET, execution);
		assertThat(response.getStatusCode().value()).isEqualTo(429);
		assertThat(execution.count()).isEqualTo(3);
		assertThat(this.sleeper.sleeps()).containsExactly(Duration.ofSeconds(1), Duration.ofSeconds(1));
		assertThat(response).isSameAs(execution.returned().get(2));
		assertThat(execution.returned().get(2).isClosed()).isFalse();
	}

	@Test
	void oneAttemptRetriesNothing() throws IOException {
		ScriptedExecution execution = new ScriptedExecution(FakeResponse.of(429, "Retry-After", "1"));
		send(this.builder.maxAttempts(1).build(), HttpMethod.GET, execution);
		assertThat(execution.count()).isEqualTo(1);
		assertThat(this.sleeper.sleeps()).isEmpty();
	}

	@Test
	void stopsWhenTheNextWaitDoesNotFitInWhatIsLeftOfTheTotalWait() throws IOException {
		ScriptedExecution execution = new ScriptedExecution(FakeResponse.of(429, "Retry-After", "3"));
		ClientHttpResponse response = send(this.builder.maxAttempts(10).maxTotalWait(Duration.ofSeconds(7)).build(),
				HttpMethod.GET, execution);
		// 3s + 3s waited; 3s more would exceed 7s
		assertThat(this.sleeper.sleeps()).containsExactly(Duration.ofSeconds(3), Duration.ofSeconds(3));
		assertThat(execution.count()).isEqualTo(3);
		assertThat(response.getStatusCode().value()).isEqualTo(429);
		assertThat(execution.returned().get(2).isClosed()).isFalse();
	}

	@Test
	void aWaitExactlyFillingTheBudgetIsMade() throws IOException {
		ScriptedExecution execution = new ScriptedExecution(FakeResponse.of(429, "Retry-After", "5"),
				FakeResponse.of(200));
		send(this.builder.maxTotalWait(Duration.ofSeconds(5)).build(), HttpMethod.GET, execution);
		assertThat(this.sleeper.sleeps()).containsExactly(Duration.ofSeconds(5));
	}

	@Test
	void givesUpAtOnceWhenRetryAfterIsLongerThanTheTotalWait() throws IOException {
		ScriptedExecution execution = new ScriptedExecution(FakeResponse.of(429, "Retry-After", "60"),
				FakeResponse.of(200));
		ClientHttpResponse response = send(this.builder.build(), HttpMethod.GET, execution);
		assertThat(response.getStatusCode().value()).isEqualTo(429);
		assertThat(execution.count()).isEqualTo(1);
		assertThat(this.sleeper.sleeps()).isEmpty();
		assertThat(execution.returned().get(0).isClosed()).isFalse();
	}

	@Test
	void givesUpWhenTheBackoffDoesNotFitInTheTotalWait() throws IOException {
		ScriptedExecution execution = new ScriptedExecution(FakeResponse.of(429));
		send(this.builder.maxAttempts(10)
			.baseDelay(Duration.ofSeconds(1))
			.maxDelay(Duration.ofSeconds(60))
			.maxTotalWait(Duration.ofSeconds(2))
			.build(), HttpMethod.GET, execution);
		// 0.5s, then 1s (1.5s in all); the next 2s does not fit
		assertThat(this.sleeper.sleeps()).containsExactly(Duration.ofMillis(500), Duration.ofSeconds(1));
		assertThat(execution.count()).isEqualTo(3);
	}

	@Test
	void retryAfterIsNotCappedByMaxDelay() throws IOException {
		ScriptedExecution execution = new ScriptedExecution(FakeResponse.of(429, "Retry-After", "4"),
				FakeResponse.of(200));
		send(this.builder.maxDelay(Duration.ofSeconds(1)).build(), HttpMethod.GET, execution);
		assertThat(this.sleeper.sleeps()).containsExactly(Duration.ofSeconds(4));
	}

	@ParameterizedTest
	@ValueSource(strings = { "GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE" })
	void retriesIdempotentMethodsByDefault(String method) throws IOException {
		ScriptedExecution execution = new ScriptedExecution(FakeResponse.of(429, "Retry-After", "1"),
				FakeResponse.of(200));
		send(this.builder.build(), HttpMethod.valueOf(method), execution);
		assertThat(execution.count()).isEqualTo(2);
	}

	@ParameterizedTest
	@ValueSource(strings = { "POST", "PATCH" })
	void doesNotRetryOtherMethodsByDefault(String method) throws IOException {
		ScriptedExecution execution = new ScriptedExecution(FakeResponse.of(429, "Retry-After", "1"),
				FakeResponse.of(200));
		ClientHttpResponse response = send(this.builder.build(), HttpMethod.valueOf(method), execution);
		assertThat(response.getStatusCode().value()).isEqualTo(429);
		assertThat(execution.count()).isEqualTo(1);
		assertThat(this.sleeper.sleeps()).isEmpty();
	}

	@Test
	void retriesPostWhenConfiguredAndSendsTheSameBodyAgain() throws IOException {
		ScriptedExecution execution = new ScriptedExecution(FakeResponse.of(429, "Retry-After", "1"),
				FakeResponse.of(429), FakeResponse.of(201));
		byte[] body = "{\"order\":42}".getBytes(StandardCharsets.UTF_8);
		RetryAfterInterceptor interceptor = this.builder.methods(HttpMethod.POST).build();
		ClientHttpResponse response = interceptor.intercept(request(HttpMethod.POST), body, execution);
		assertThat(response.getStatusCode().value()).isEqualTo(201);
		assertThat(execution.bodies()).hasSize(3).allSatisfy((sent) -> assertThat(sent).isEqualTo(body));
	}

	@Test
	void configuredMethodsReplaceTheDefault() throws IOException {
		ScriptedExecution execution = new ScriptedExecution(FakeResponse.of(429, "Retry-After", "1"),
				FakeResponse.of(200));
		send(this.builder.methods(List.of(HttpMethod.POST)).build(), HttpMethod.GET, execution);
		assertThat(execution.count()).isEqualTo(1);
	}

	@Test
	void doesNotRetryA503WithoutRetryAfter() throws IOException {
		ScriptedExecution execution = new ScriptedExecution(FakeResponse.of(503), FakeResponse.of(200));
		ClientHttpResponse response = send(this.builder.build(), HttpMethod.GET, execution);
		assertThat(response.getStatusCode().value()).isEqualTo(503);
		assertThat(execution.count()).isEqualTo(1);
		assertThat(execution.returned().get(0).isClosed()).isFalse();
	}

	@Test
	void retriesA503WithRetryAfter() throws IOException {
		ScriptedExecution execution = new ScriptedExecution(FakeResponse.of(503, "Retry-After", "2"),
				FakeResponse.of(200));
		ClientHttpResponse response = send(this.builder.build(), HttpMethod.GET, execution);
		assertThat(response.getStatusCode().value()).isEqualTo(200);
		assertThat(this.sleeper.sleeps()).containsExactly(Duration.ofSeconds(2));
	}

	@Test
	void doesNotRetryA503WithAnInvalidRetryAfter() throws IOException {
		ScriptedExecution execution = new ScriptedExecution(FakeResponse.of(503, "Retry-After", "soon"),
				FakeResponse.of(200));
		assertThat(send(this.builder.build(), HttpMethod.GET, execution).getStatusCode().value()).isEqualTo(503);
		assertThat(execution.count()).isEqualTo(1);
	}

	@ParameterizedTest
	@ValueSource(ints = { 200, 204, 400, 404, 500, 502, 504 })
	void doesNotRetryOtherStatuses(int status) throws IOException {
		ScriptedExecution execution = new ScriptedExecution(FakeResponse.of(status, "Retry-After", "1"),
				FakeResponse.of(200));
		assertThat(send(this.builder.build(), HttpMethod.GET, execution).getStatusCode().value()).isEqualTo(status);
		assertThat(execution.count()).isEqualTo(1);
	}

	@ParameterizedTest
	@ValueSource(strings = { "", " ", "soon", "-5", "+5", "1e3", "5s", "0x10", "1,5", "5, 6", "NaN", "Infinity",
			"Fri, 99 Foo 2026 25:61:61 GMT", "Mon, 01 Mar 2026 12:00:10 GMT" /* wrong day of the week */ })
	void treatsAnInvalidRetryAfterAsAbsent(String value) throws IOException {
		ScriptedExecution execution = new ScriptedExecution(FakeResponse.of(429, "Retry-After", value),
				FakeResponse.of(200));
		ClientHttpResponse response = send(this.builder.baseDelay(Duration.ofMillis(100)).build(), HttpMethod.GET,
				execution);
		assertThat(response.getStatusCode().value()).isEqualTo(200);
		// the backoff at the lowest jitter, not a wait read from the header
		assertThat(this.sleeper.sleeps()).containsExactly(Duration.ofMillis(50));
	}

	@ParameterizedTest
	@ValueSource(strings = { "99999999999999999999999999999999", "9223372036854775808", "100000000000000",
			"Fri, 31 Dec 9999 23:59:59 GMT" })
	void givesUpOnAHugeRetryAfter(String value) throws IOException {
		ScriptedExecution execution = new ScriptedExecution(FakeResponse.of(429, "Retry-After", value),
				FakeResponse.of(200));
		ClientHttpResponse response = send(
				this.builder.maxTotalWait(Duration.ofDays(1000)).maxAttempts(2).build(),
				HttpMethod.GET, execution);
		assertThat(response.getStatusCode().value()).isEqualTo(429);
		assertThat(this.sleeper.sleeps()).isEmpty();
	}

	@Test
	void readsAFractionalRetryAfter() throws IOException {
		ScriptedExecution execution = new ScriptedExecution(FakeResponse.of(429, "Retry-After", " 1.5 "),
				FakeResponse.of(200));
		send(this.builder.build(), HttpMethod.GET, execution);
		assertThat(this.sleeper.sleeps()).containsExactly(Duration.ofMillis(1500));
	}

	@Test
	void zeroRetryAfterRetriesAtOnce() throws IOException {
		ScriptedExecution execution = new ScriptedExecution(FakeResponse.of(429, "Retry-After", "0"),
				FakeResponse.of(200));
		assertThat(send(this.builder.build(), HttpMethod.GET, execution).getStatusCode().value()).isEqualTo(200);
		assertThat(this.sleeper.sleeps()).containsExactly(Duration.ZERO);
	}

	@Test
	void anInterruptedWaitRestoresTheFlagAndReturnsTheLastResponse() throws IOException {
		ScriptedExecution execution = new ScriptedExecution(
				FakeResponse.withBody(429, "{\"title\":\"Too Many Requests\"}", "Retry-After", "2"),
				FakeResponse.of(200));
		RetryAfterInterceptor interceptor = this.builder.sleeper((duration) -> {
			throw new InterruptedException();
		}).build();
		ClientHttpResponse response = send(interceptor, HttpMethod.GET, execution);
		assertThat(Thread.currentThread().isInterrupted()).isTrue();
		assertThat(execution.count()).isEqualTo(1);
		assertThat(response.getStatusCode().value()).isEqualTo(429);
		assertThat(response.getHeaders().getFirst("Retry-After")).isEqualTo("2");
		assertThat(StreamUtils.copyToString(response.getBody(), StandardCharsets.UTF_8))
			.isEqualTo("{\"title\":\"Too Many Requests\"}");
		assertThat(execution.returned().get(0).isClosed()).isTrue();
	}

	@Test
	void anAlreadyInterruptedThreadDoesNotWaitWithTheSystemSleeper() throws IOException {
		ScriptedExecution execution = new ScriptedExecution(FakeResponse.of(429, "Retry-After", "5"),
				FakeResponse.of(200));
		Thread.currentThread().interrupt();
		ClientHttpResponse response = send(this.builder.sleeper(Sleeper.SYSTEM).build(), HttpMethod.GET, execution);
		assertThat(Thread.currentThread().isInterrupted()).isTrue();
		assertThat(response.getStatusCode().value()).isEqualTo(429);
		assertThat(execution.count()).isEqualTo(1);
	}

	@Test
	void anAlreadyInterruptedThreadDoesNotRetryEvenAfterAZeroWait() throws IOException {
		ScriptedExecution execution = new ScriptedExecution(FakeResponse.of(429, "Retry-After", "0"),
				FakeResponse.of(200));
		Thread.currentThread().interrupt();
		ClientHttpResponse response = send(this.builder.sleeper(Sleeper.SYSTEM).build(), HttpMethod.GET, execution);
		assertThat(Thread.currentThread().isInterrupted()).isTrue();
		assertThat(response.getStatusCode().value()).isEqualTo(429);
		assertThat(execution.count()).isEqualTo(1);
	}

	@Test
	void builderRejectsBadSettings() {
		RetryAfterInterceptor.Builder builder = RetryAfterInterceptor.builder();
		assertThatIllegalArgumentException().isThrownBy(() -> builder.maxAttempts(0))
			.withMessage("maxAttempts must be at least 1, was 0");
		assertThatIllegalArgumentException().isThrownBy(() -> builder.baseDelay(Duration.ofMillis(-1)))
			.withMessageContaining("baseDelay must not be negative");
		assertThatIllegalArgumentException().isThrownBy(() -> builder.maxDelay(Duration.ofMillis(-1)))
			.withMessageContaining("maxDelay must not be negative");
		assertThatIllegalArgumentException().isThrownBy(() -> builder.maxTotalWait(Duration.ofMillis(-1)))
			.withMessageContaining("maxTotalWait must not be negative");
	}

	@Test
	void idempotentMethodsAreTheDefaultAndCannotBeChanged() {
		assertThat(RetryAfterInterceptor.IDEMPOTENT_METHODS).containsExactly(HttpMethod.GET, HttpMethod.HEAD,
				HttpMethod.OPTIONS, HttpMethod.PUT, HttpMethod.DELETE, HttpMethod.TRACE);
		assertThatExceptionOfType(UnsupportedOperationException.class)
			.isThrownBy(() -> RetryAfterInterceptor.IDEMPOTENT_METHODS.add(HttpMethod.POST));
	}

	private static ClientHttpResponse send(RetryAfterInterceptor interceptor, HttpMethod method,
			ScriptedExecution execution) throws IOException {
		return interceptor.intercept(request(method), NO_BODY, execution);
	}

	private static MockClientHttpRequest request(HttpMethod method) {
		return new MockClientHttpRequest(method, URI.create("https://api.example.com/orders?key=secret"));
	}

	static String httpDate(Instant instant) {
		return DateTimeFormatter.RFC_1123_DATE_TIME.format(instant.atOffset(ZoneOffset.UTC));
	}

	static RandomGenerator fixedRandom(double value) {
		return new RandomGenerator() {
			@Override
			public long nextLong() {
				throw new UnsupportedOperationException("only nextDouble() is expected");
			}

			@Override
			public double nextDouble() {
				return value;
			}
		};
	}


	@Test
	void eachAttemptCarriesTheHeadersOfTheCallNotThoseOfTheAttemptBefore() {
		// An interceptor after this one (request signing) adds its header afresh on each attempt.
		List<MockClientHttpRequest> sent = new java.util.ArrayList<>();
		org.springframework.http.client.ClientHttpRequestFactory factory = (uri, method) -> {
			MockClientHttpRequest request = new MockClientHttpRequest(method, uri);
			org.springframework.mock.http.client.MockClientHttpResponse response = new org.springframework.mock.http.client.MockClientHttpResponse(
					NO_BODY, (sent.isEmpty()) ? org.springframework.http.HttpStatus.TOO_MANY_REQUESTS
							: org.springframework.http.HttpStatus.OK);
			response.getHeaders().set("Retry-After", "1");
			request.setResponse(response);
			sent.add(request);
			return request;
		};
		java.util.concurrent.atomic.AtomicInteger signatures = new java.util.concurrent.atomic.AtomicInteger();
		org.springframework.web.client.RestClient client = org.springframework.web.client.RestClient.builder()
			.requestFactory(factory)
			.requestInterceptor(this.builder.build())
			.requestInterceptor((request, body, execution) -> {
				request.getHeaders().add("X-Signature", "sig-" + signatures.incrementAndGet());
				return execution.execute(request, body);
			})
			.defaultHeader("X-Call", "one")
			.build();
		client.get().uri(URI.create("http://example.com/")).retrieve().toBodilessEntity();
		assertThat(sent).hasSize(2);
		assertThat(sent.get(0).getHeaders().get("X-Signature")).containsExactly("sig-1");
		assertThat(sent.get(1).getHeaders().get("X-Signature")).containsExactly("sig-2");
		assertThat(sent.get(1).getHeaders().get("X-Call")).containsExactly("one");
	}

	@Test
	void aDiscardedResponsesBodyIsReadNoFurtherThan64KiB() throws IOException {
		// A hostile server answers 429 with an endless body: the retry must neither hang nor fill the heap.
		ClientHttpResponse endless = new ClientHttpResponse() {

			@Override
			public org.springframework.http.HttpStatusCode getStatusCode() {
				return org.springframework.http.HttpStatus.TOO_MANY_REQUESTS;
			}

			@Override
			public String getStatusText() {
				return "Too Many Requests";
			}

			@Override
			public org.springframework.http.HttpHeaders getHeaders() {
				return new org.springframework.http.HttpHeaders();
			}

			@Override
			public java.io.InputStream getBody() {
				return new java.io.InputStream() {

					@Override
					public int read() {
						return 'x';
					}

				};
			}

			@Override
			public void close() {
			}

		};
		assertThat(StreamUtils.copyToByteArray(DrainedResponse.drain(endless).getBody())).hasSize(64 * 1024);
	}

}
