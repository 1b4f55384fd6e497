package io.github.ratelimit.redis.it;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.springframework.context.ConfigurableApplicationContext;

import io.github.ratelimit.redis.RedisRateLimitStore;
import io.github.ratelimit.testsupport.Http;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two application instances on one Redis (standalone or cluster) share one concurrency limit through
 * HTTP: of 12 requests in flight at once, spread over both, exactly 2 run.
 */
final class SharedSlotsTests {

	private SharedSlotsTests() {
	}

	static void twoInstancesShareTheSlots(String... redisProperties) throws Exception {
		String[] properties = Stream.concat(Stream.of(redisProperties), Stream.of("rate-limit.store.redis.timeout=5s"))
			.toArray(String[]::new);
		RedisTestApplication.gate = new CountDownLatch(1);
		RedisTestApplication.arrivals.drainPermits();
		try (ConfigurableApplicationContext one = RedisTestApplication.start(properties);
				ConfigurableApplicationContext two = RedisTestApplication.start(properties)) {
			int[] ports = { RedisTestApplication.port(one), RedisTestApplication.port(two) };
			List<CompletableFuture<HttpResponse<String>>> responses = new ArrayList<>();
			for (int i = 0; i < 12; i++) {
				Http http = new Http(ports[i % 2]);
				responses.add(CompletableFuture.supplyAsync(() -> http.get("/work"),
						(runnable) -> new Thread(runnable).start()));
			}
			assertThat(RedisTestApplication.arrivals.tryAcquire(2, 30, TimeUnit.SECONDS)).isTrue();
			List<HttpResponse<String>> rejected = new ArrayList<>();
			for (int i = 0; i < 1200 && rejected.size() < 10; i++) {
				Thread.sleep(25);
				rejected = responses.stream().filter(CompletableFuture::isDone).map(CompletableFuture::join).toList();
			}
			assertThat(rejected).hasSize(10).allSatisfy((response) -> {
				assertThat(response.statusCode()).isEqualTo(429);
				assertThat(response.headers().firstValue("Retry-After")).hasValue("1");
				assertThat(response.headers().firstValue("RateLimit-Policy")).hasValue("\"slots\";q=2;qu=\"concurrent-requests\"");
			});
			assertThat(RedisTestApplication.arrivals.availablePermits()).as("never a third in flight").isZero();
			RedisTestApplication.gate.countDown();
			assertThat(responses.stream().map(CompletableFuture::join).filter((r) -> r.statusCode() == 200)).hasSize(2);
			// Both slots come back (a moment after the clients read their responses): the next two run, on
			// either instance.
			assertThat(eventually(new Http(ports[1]))).isEqualTo(200);
			assertThat(eventually(new Http(ports[0]))).isEqualTo(200);
			assertThat(one.getBean(RedisRateLimitStore.class).fallbacks()).isZero();
			assertThat(two.getBean(RedisRateLimitStore.class).fallbacks()).isZero();
		}
		finally {
			RedisTestApplication.gate.countDown();
		}
	}

	/** Asks for at most 5 s until the answer is not a 429: the server frees a slot once it completes a request. */
	private static int eventually(Http http) throws InterruptedException {
		int status = http.get("/work").statusCode();
		for (int i = 0; i < 100 && status == 429; i++) {
			Thread.sleep(50);
			status = http.get("/work").statusCode();
		}
		return status;
	}
}
