package io.github.ratelimit.reactive;

import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.CaffeineRateLimitStore;
import io.github.ratelimit.core.Decision;
import io.github.ratelimit.core.RateLimitClock;
import io.github.ratelimit.core.RateLimitStore;
import io.github.ratelimit.core.Receipt;
import io.github.ratelimit.testsupport.Http;
import io.github.ratelimit.testsupport.NonBlocking;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A store whose calls block (any store but the in-process one) is asked off the event loop: a client that
 * goes away while it decides leaves nothing taken (the step is undone once decided), and a response committed
 * after the chain ended is counted with its status.
 */
@SpringBootTest(classes = { ReactiveApplication.class, ReactiveCancellationTests.SlowStore.class },
		webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive", "rate-limit.policies.slots.algorithm=concurrency",
				"rate-limit.policies.slots.limit=1", "rate-limit.policies.slots.key=global",
				"rate-limit.policies.per-report.limit=2", "rate-limit.policies.per-report.period=1m",
				"rate-limit.rules[0].path=/work", "rate-limit.rules[0].policies=slots",
				"rate-limit.policies.login.limit=3", "rate-limit.policies.login.period=15m",
				"rate-limit.policies.login.key=param:username", "rate-limit.policies.login.count=failures",
				"rate-limit.rules[1].path=/login-void", "rate-limit.rules[1].policies=login" })
class ReactiveCancellationTests {

	static {
		NonBlocking.install();
	}

	@LocalServerPort
	int port;

	@Autowired
	SlowStore.Slow store;

	@Test
	void aClientGoneWhileTheStoreDecidesLeavesNoSlotTaken() throws Exception {
		this.store.admitting.drainPermits();
		this.store.released.drainPermits();
		try (Socket socket = new Socket("localhost", this.port)) {
			socket.getOutputStream().write(("GET /work?ms=0 HTTP/1.1\r\nHost: localhost\r\n\r\n")
				.getBytes(StandardCharsets.US_ASCII));
			socket.getOutputStream().flush();
			assertThat(this.store.admitting.tryAcquire(10, TimeUnit.SECONDS)).as("the store is deciding").isTrue();
		}
		// Gone while the store decides: once decided, the step is undone and its slot given back.
		assertThat(this.store.released.tryAcquire(10, TimeUnit.SECONDS)).as("the slot was given back").isTrue();
		assertThat(new Http(this.port).get("/work?ms=0").statusCode()).as("the one slot is free").isEqualTo(200);
	}

	@Test
	void aStatusSetAfterTheChainEndedIsTheOneCountedWhenTheStoreBlocks() {
		Http http = new Http(this.port);
		for (int i = 0; i < 4; i++) {
			assertThat(http.post("/login-void", "username=erin&password=right").statusCode()).as("successes are free")
				.isEqualTo(204);
		}
		HttpResponse<String> failure = http.post("/login-void", "username=erin&password=wrong");
		assertThat(failure.statusCode()).isEqualTo(401);
		assertThat(failure.headers().firstValue("X-RateLimit-Remaining")).hasValue("2");
	}

	/**
	 * The in-process store, slow: as a store that asks a server, its admissions block, here 400 ms (a server's
	 * latency, long enough for the server to see a client go away meanwhile). It says when it starts to admit
	 * and when it releases a slot.
	 */
	@TestConfiguration(proxyBeanMethods = false)
	static class SlowStore {

		@Bean
		Slow rateLimitStore() {
			return new Slow();
		}

		static final class Slow implements RateLimitStore {

			final Semaphore admitting = new Semaphore(0);

			final Semaphore released = new Semaphore(0);

			private final CaffeineRateLimitStore store = new CaffeineRateLimitStore(1000, RateLimitClock.SYSTEM);

			@Override
			public List<Receipt> admitAll(List<Acquisition> acquisitions) {
				this.admitting.release();
				try {
					Thread.sleep(400);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
				return this.store.admitAll(acquisitions);
			}

			@Override
			public Decision tryAcquire(Acquisition acquisition) {
				return this.store.tryAcquire(acquisition);
			}

			@Override
			public Decision release(Acquisition acquisition) {
				Decision released = this.store.release(acquisition);
				this.released.release();
				return released;
			}

			@Override
			public Decision peek(Acquisition acquisition) {
				return this.store.peek(acquisition);
			}

			@Override
			public void reset(String limitId, String key) {
				this.store.reset(limitId, key);
			}

			@Override
			public void resetAll() {
				this.store.resetAll();
			}

		}

	}

}
