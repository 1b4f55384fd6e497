package io.github.ratelimit.parked;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * On the wall clock, over Tomcat with 10 request threads and {@code rate-limit.delay.park} unset (every
 * filter sees async dispatches, so requests are parked): 200 delayed requests wait at once, parked
 * without their threads, while other requests keep being answered; each waiting request is then served
 * in its turn. Were a wait to hold its thread, the 10 threads would be taken by waiting requests and a
 * ping would be answered only once nearly all of them were served. What is asserted is that order, not a
 * latency, so that a loaded machine does not fail it.
 */
@SpringBootTest(classes = ParkedApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "server.tomcat.threads.max=10", "rate-limit.rules[0].path=/waiting/**",
				"rate-limit.rules[0].policies=waiting", "rate-limit.policies.waiting.limit=25",
				"rate-limit.policies.waiting.period=1s", "rate-limit.policies.waiting.key=global",
				"rate-limit.policies.waiting.on-limit=delay", "rate-limit.policies.waiting.max-delay=30s",
				"rate-limit.delay.max-waiting=1000" })
class WaitingWithoutThreadsTests {

	private static final int WAITING = 200;

	@LocalServerPort
	int port;

	@Test
	void twoHundredRequestsWaitWhileOthersAreAnswered() throws Exception {
		// HTTP/1.1 without an h2c upgrade: one connection per request in flight.
		HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
		HttpClient other = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
		ExecutorService clients = Executors.newFixedThreadPool(WAITING);
		try {
			CountDownLatch go = new CountDownLatch(1);
			AtomicInteger done = new AtomicInteger();
			CountDownLatch burstServed = new CountDownLatch(25);
			List<Future<HttpResponse<String>>> waiting = new ArrayList<>();
			for (int i = 0; i < WAITING; i++) {
				waiting.add(clients.submit(() -> {
					go.await();
					HttpResponse<String> response = get(http, "/waiting/work");
					done.incrementAndGet();
					burstServed.countDown();
					return response;
				}));
			}
			long start = System.nanoTime();
			go.countDown();
			// 25 a second: the burst of 25 goes at once, the other 175 are served over the next 7 seconds.
			// The pings go once the burst is served: the other requests then wait for their turns.
			assertThat(burstServed.await(10, TimeUnit.SECONDS)).as("the burst was served").isTrue();
			for (int i = 0; i < 2; i++) {
				assertThat(get(other, "/ping").body()).isEqualTo("pong");
				assertThat(done.get()).as("requests served when ping %d was answered", i).isLessThan(150);
			}
			for (Future<HttpResponse<String>> response : waiting) {
				HttpResponse<String> served = response.get(30, TimeUnit.SECONDS);
				assertThat(served.statusCode()).isEqualTo(200);
				assertThat(served.body()).isEqualTo("work for acme");
			}
			// The last turn comes 175 / 25 = 7 seconds after the first request.
			assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isGreaterThanOrEqualTo(6900);
		}
		finally {
			clients.shutdownNow();
		}
	}

	private HttpResponse<String> get(HttpClient http, String path) throws Exception {
		return http.send(HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + path)).build(),
				HttpResponse.BodyHandlers.ofString());
	}

}
