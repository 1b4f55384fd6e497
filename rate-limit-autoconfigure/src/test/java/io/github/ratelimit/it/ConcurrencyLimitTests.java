package io.github.ratelimit.it;

import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import io.github.ratelimit.inflight.InFlightController;
import io.github.ratelimit.testsupport.Http;

import static io.github.ratelimit.it.RateLimitEndToEndTests.header;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Concurrency limits ({@code algorithm: concurrency}) through a running server: at most {@code limit}
 * requests of a key in flight; a slot is held until the response is complete (async requests until
 * their async processing ends) and given back after an exception, a timeout, or a rejection by another
 * policy of the same request. Slow handlers wait at a gate the test opens, so nothing sleeps.
 */
@SpringBootTest(classes = { TestApplication.class, InFlightController.class }, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "management.endpoints.web.exposure.include=ratelimits",
				"rate-limit.policies.slots.algorithm=concurrency", "rate-limit.policies.slots.limit=3",
				"rate-limit.policies.slots.key=header:X-Client", "rate-limit.policies.one.algorithm=concurrency",
				"rate-limit.policies.one.limit=1", "rate-limit.policies.one.key=header:X-Client",
				"rate-limit.policies.rate.limit=1", "rate-limit.policies.rate.period=1h",
				"rate-limit.policies.rate.key=header:X-Client", "rate-limit.rules[0].path=/inflight/slow",
				"rate-limit.rules[0].policies=slots",
				"rate-limit.rules[1].path=/inflight/{name:one|one-slow|fail|callable|deferred|raw}",
				"rate-limit.rules[1].policies=one", "rate-limit.rules[2].path=/inflight/double",
				"rate-limit.rules[2].policies=one,rate", "rate-limit.policies.failures.limit=1000",
				"rate-limit.policies.failures.period=1h", "rate-limit.policies.failures.count=failures",
				"rate-limit.policies.failures.key=header:X-Client", "rate-limit.rules[3].path=/inflight/big",
				"rate-limit.rules[3].policies=one,failures" })
class ConcurrencyLimitTests {

	@LocalServerPort
	int port;

	@Autowired
	MeterRegistry meters;

	Http http;

	@BeforeEach
	void client() {
		this.http = new Http(this.port);
		InFlightController.GATE.close();
	}

	@AfterEach
	void openGate() {
		InFlightController.GATE.open();
	}

	@Test
	void exactlyTheLimitIsInFlightAndTheRestGet429WithRetryAfterOne() throws Exception {
		double rejectedBefore = decisions("slots", "rejected");
		List<CompletableFuture<HttpResponse<String>>> responses = new ArrayList<>();
		for (int i = 0; i < 8; i++) {
			responses.add(async(() -> this.http.get("/inflight/slow", "X-Client", "crowd")));
		}
		assertThat(InFlightController.GATE.awaitArrivals(3)).isTrue();
		List<HttpResponse<String>> rejected = new ArrayList<>();
		for (int i = 0; rejected.size() < 5 && i < 1200; i++) {
			Thread.sleep(25);
			rejected.clear();
			for (CompletableFuture<HttpResponse<String>> response : responses) {
				if (response.isDone()) {
					rejected.add(response.get());
				}
			}
		}
		assertThat(rejected).hasSize(5).allSatisfy((response) -> {
			assertThat(response.statusCode()).isEqualTo(429);
			assertThat(header(response, "Retry-After")).isEqualTo("1");
			assertThat(header(response, "RateLimit-Policy")).isEqualTo("\"slots\";q=3;qu=\"concurrent-requests\"");
			assertThat(header(response, "RateLimit")).isEqualTo("\"slots\";r=0");
			assertThat(header(response, "X-RateLimit-Limit")).isEqualTo("3");
			assertThat(header(response, "X-RateLimit-Remaining")).isEqualTo("0");
			assertThat(response.headers().firstValue("X-RateLimit-Reset")).as("no time tells when a slot frees").isEmpty();
			assertThat(response.body()).contains("\"violated-policies\":[\"slots\"]");
		});
		assertThat(InFlightController.GATE.arrivals()).as("never a fourth in flight").isEqualTo(3);
		HttpResponse<String> state = this.http.get("/actuator/ratelimits/slots/header:crowd");
		assertThat(state.body()).contains("\"inFlight\":3");
		assertThat(decisions("slots", "rejected") - rejectedBefore).isEqualTo(5);

		InFlightController.GATE.open();
		List<String> freeSlots = new ArrayList<>();
		for (CompletableFuture<HttpResponse<String>> response : responses) {
			HttpResponse<String> done = response.get(30, TimeUnit.SECONDS);
			if (done.statusCode() == 200) {
				freeSlots.add(header(done, "RateLimit"));
			}
		}
		assertThat(freeSlots).containsExactlyInAnyOrder("\"slots\";r=2", "\"slots\";r=1", "\"slots\";r=0");
		awaitFree("slots", "header:crowd");
		HttpResponse<String> after = this.http.get("/inflight/slow", "X-Client", "crowd");
		assertThat(after.statusCode()).as("every slot was given back").isEqualTo(200);
		assertThat(header(after, "RateLimit")).isEqualTo("\"slots\";r=2");
		awaitFree("slots", "header:crowd");
	}

	@Test
	void aHandlerThatThrowsGivesItsSlotBack() {
		for (int i = 0; i < 3; i++) {
			assertThat(this.http.get("/inflight/fail", "X-Client", "thrower").statusCode()).isEqualTo(500);
		}
		assertThat(this.http.get("/inflight/one", "X-Client", "thrower").statusCode()).isEqualTo(200);
	}

	@Test
	void anAsyncRequestHoldsItsSlotUntilItsAsyncProcessingCompletes() throws Exception {
		CompletableFuture<HttpResponse<String>> callable = async(
				() -> this.http.get("/inflight/callable", "X-Client", "async"));
		assertThat(InFlightController.GATE.awaitArrivals(1)).isTrue();
		// The first dispatch has returned to the container; the request is still in flight.
		HttpResponse<String> meanwhile = this.http.get("/inflight/one", "X-Client", "async");
		assertThat(meanwhile.statusCode()).isEqualTo(429);
		assertThat(header(meanwhile, "RateLimit")).isEqualTo("\"one\";r=0");
		InFlightController.GATE.open();
		assertThat(callable.get(30, TimeUnit.SECONDS).body()).isEqualTo("called");
		assertThat(eventually(() -> this.http.get("/inflight/one", "X-Client", "async")).statusCode()).isEqualTo(200);
	}

	@Test
	void anAsyncRequestCompletedWithoutADispatchBackGivesItsSlotBackFromItsAsyncListener() throws Exception {
		CompletableFuture<HttpResponse<String>> raw = async(() -> this.http.get("/inflight/raw", "X-Client", "raw"));
		assertThat(InFlightController.GATE.awaitArrivals(1)).isTrue();
		assertThat(this.http.get("/inflight/one", "X-Client", "raw").statusCode()).as("still in flight").isEqualTo(429);
		InFlightController.GATE.open();
		assertThat(raw.get(30, TimeUnit.SECONDS).body()).isEqualTo("raw");
		// No filter runs again for this request: only the container's completion can give the slot back.
		assertThat(eventually(() -> this.http.get("/inflight/one", "X-Client", "raw")).statusCode()).isEqualTo(200);
	}

	@Test
	void anAsyncRequestThatTimesOutGivesItsSlotBack() throws Exception {
		assertThat(this.http.get("/inflight/deferred", "X-Client", "late").statusCode()).isEqualTo(503);
		assertThat(eventually(() -> this.http.get("/inflight/one", "X-Client", "late")).statusCode()).isEqualTo(200);
	}

	@Test
	void aRequestAnotherPolicyRejectsHoldsNoSlot() throws Exception {
		assertThat(this.http.get("/inflight/double", "X-Client", "both").statusCode()).isEqualTo(200);
		awaitFree("one", "header:both");
		HttpResponse<String> rejected = this.http.get("/inflight/double", "X-Client", "both");
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(rejected.body()).contains("\"violated-policies\":[\"rate\"]");
		assertThat(header(rejected, "RateLimit")).isEqualTo("\"one\";r=1, \"rate\";r=0;t=3600");
		// The one slot is free: a slow request takes it, and only then is the next one rejected.
		CompletableFuture<HttpResponse<String>> slow = async(() -> this.http.get("/inflight/one-slow", "X-Client", "both"));
		assertThat(InFlightController.GATE.awaitArrivals(1)).isTrue();
		assertThat(this.http.get("/inflight/one", "X-Client", "both").statusCode()).isEqualTo(429);
		InFlightController.GATE.open();
		assertThat(slow.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
	}

	@Test
	void aClientGoneBeforeItsHeldResponseIsWrittenStillGivesItsSlotBack() throws Exception {
		// With a policy counted once the response is known, the response is held and written after the count;
		// its write fails when the client has gone (reset), which must not keep the concurrency slot for good.
		try (Socket socket = new Socket("127.0.0.1", this.port)) {
			socket.getOutputStream()
				.write(("GET /inflight/big HTTP/1.1\r\nHost: localhost\r\nX-Client: gone\r\n\r\n")
					.getBytes(StandardCharsets.US_ASCII));
			socket.getOutputStream().flush();
			assertThat(InFlightController.GATE.awaitArrivals(1)).isTrue();
			socket.setSoLinger(true, 0);
		}
		InFlightController.GATE.open();
		awaitFree("one", "header:gone");
		assertThat(this.http.get("/inflight/one", "X-Client", "gone").statusCode()).isEqualTo(200);
	}

	@Test
	void keysHaveSlotsOfTheirOwn() throws Exception {
		CompletableFuture<HttpResponse<String>> slow = async(() -> this.http.get("/inflight/one-slow", "X-Client", "k1"));
		assertThat(InFlightController.GATE.awaitArrivals(1)).isTrue();
		assertThat(this.http.get("/inflight/one", "X-Client", "k1").statusCode()).isEqualTo(429);
		assertThat(this.http.get("/inflight/one", "X-Client", "k2").statusCode()).isEqualTo(200);
		InFlightController.GATE.open();
		assertThat(slow.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
	}

	private double decisions(String policy, String outcome) {
		Counter counter = this.meters.find("ratelimit.decisions").tag("policy", policy).tag("outcome", outcome).counter();
		return (counter != null) ? counter.count() : 0;
	}

	private static <T> CompletableFuture<T> async(Supplier<T> call) {
		return CompletableFuture.supplyAsync(call, (runnable) -> new Thread(runnable).start());
	}

	/**
	 * Waits (at most 5 s) until a key holds no slot: a slot is given back once the server has completed the
	 * request, which may be a moment after its client has read the response.
	 */
	private void awaitFree(String policy, String key) throws InterruptedException {
		String path = "/actuator/ratelimits/" + policy + "/" + key;
		for (int i = 0; i < 100 && !this.http.get(path).body().contains("\"inFlight\":0"); i++) {
			Thread.sleep(50);
		}
		assertThat(this.http.get(path).body()).contains("\"inFlight\":0");
	}

	/**
	 * Asks until the answer is not a 429, for at most 5 s: an async request's slot comes back when the
	 * container completes it, which may be a moment after its client has read the response.
	 */
	private static HttpResponse<String> eventually(Supplier<HttpResponse<String>> call) throws InterruptedException {
		HttpResponse<String> response = call.get();
		for (int i = 0; i < 100 && response.statusCode() == 429; i++) {
			Thread.sleep(50);
			response = call.get();
		}
		return response;
	}
}
