package io.github.ratelimit.it;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Primary;

import io.github.ratelimit.core.RateLimitClock;
import io.github.ratelimit.web.RequestDelay;
import io.github.ratelimit.testsupport.Http;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Delay mode for real: the system clock and real sleeps. Simultaneous requests leave spaced at the
 * drain rate (only lower bounds are asserted: a slow machine may be later, never earlier).
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT)
@Import(DelayOnTheWallClockTests.RealTime.class)
class DelayOnTheWallClockTests {

	@LocalServerPort
	int port;

	@Test
	void simultaneousRequestsAreServedAtTheDrainRate() throws Exception {
		Http http = new Http(this.port);
		ExecutorService pool = Executors.newFixedThreadPool(5);
		try {
			long start = System.nanoTime();
			List<Future<Long>> finished = new ArrayList<>();
			for (int i = 0; i < 5; i++) {
				finished.add(pool.submit(() -> {
					assertThat(http.get("/algo/smooth").statusCode()).isEqualTo(200);
					return System.nanoTime() - start;
				}));
			}
			List<Long> elapsed = new ArrayList<>();
			for (Future<Long> future : finished) {
				elapsed.add(future.get());
			}
			elapsed.sort(null);
			// 4 a second: the k-th (0-based) leaves no earlier than k * 250 ms after the first arrived
			for (int k = 1; k < 5; k++) {
				assertThat(elapsed.get(k)).as("request %d", k).isGreaterThanOrEqualTo(k * 250_000_000L - 50_000_000L);
			}
		}
		finally {
			pool.shutdownNow();
		}
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class RealTime {

		@Bean
		@Primary
		RateLimitClock systemClock() {
			return RateLimitClock.SYSTEM;
		}

		@Bean
		@Primary
		RequestDelay sleep() {
			return RequestDelay.TIMER;
		}

	}
}
