package io.github.ratelimit.reactive;

import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

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

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.CaffeineRateLimitStore;
import io.github.ratelimit.core.Decision;
import io.github.ratelimit.core.RateLimitClock;
import io.github.ratelimit.core.RateLimitStore;
import io.github.ratelimit.core.Receipt;
import io.github.ratelimit.testsupport.AtOnce;
import io.github.ratelimit.testsupport.Http;
import io.github.ratelimit.testsupport.NonBlocking;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A store of the application's own that admits without blocking ({@link RateLimitStore#admitAllAsync}, whose
 * step completes 20 ms later on a thread of its own, as a store that asks a server does): WebFlux asks it on
 * the event loop, never calls its blocking {@code admitAll}, and through a running Netty server requests are
 * decided as with a store that answers at once: exactly under parallel guesses, with their headers, and a step
 * that fails later fails open.
 */
@SpringBootTest(classes = ReactiveApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive", "rate-limit.policies.login.limit=4",
				"rate-limit.policies.login.period=15m", "rate-limit.policies.login.key=param:username",
				"rate-limit.policies.login.count=failures", "rate-limit.rules[0].path=/login",
				"rate-limit.rules[0].policies=login", "rate-limit.policies.per-report.limit=2",
				"rate-limit.policies.per-report.period=1m" })
@Import(LaterStoreStepTests.StoreConfiguration.class)
class LaterStoreStepTests {

	static {
		NonBlocking.install();
	}

	@LocalServerPort
	int port;

	@Autowired
	LaterStore store;

	Http http;

	@BeforeEach
	void client() {
		this.http = new Http(this.port);
		this.store.failing.set(false);
	}

	@AfterEach
	void healthy() {
		this.store.failing.set(false);
	}

	@Test
	void parallelWrongGuessesGetExactlyTheBudget() throws Exception {
		int before = this.store.completedLater.get();
		Map<Integer, Integer> statuses = AtOnce.statuses(24,
				(i) -> () -> this.http.post("/login", "username=mallory&password=guess").statusCode());
		assertThat(statuses).containsExactlyInAnyOrderEntriesOf(Map.of(401, 4, 429, 20));
		HttpResponse<String> locked = this.http.post("/login", "username=mallory&password=right");
		assertThat(locked.statusCode()).as("locked out").isEqualTo(429);
		assertThat(locked.headers().firstValue("Retry-After")).isPresent();
		assertThat(this.store.completedLater.get() - before).as("steps completed on the store's thread").isEqualTo(25);
	}

	@Test
	void headersAreWrittenFromAStepThatCompletedLater() {
		HttpResponse<String> wrong = this.http.post("/login", "username=peggy&password=wrong");
		assertThat(wrong.statusCode()).isEqualTo(401);
		assertThat(wrong.headers().firstValue("X-RateLimit-Remaining")).hasValue("3");
		HttpResponse<String> right = this.http.post("/login", "username=peggy&password=right");
		assertThat(right.statusCode()).isEqualTo(200);
		assertThat(right.headers().firstValue("X-RateLimit-Remaining")).as("the success was given back").hasValue("3");
	}

	@Test
	void aStepThatFailsLaterFailsOpen() {
		this.store.failing.set(true);
		for (int i = 0; i < 6; i++) {
			assertThat(this.http.post("/login", "username=trudy&password=wrong").statusCode())
				.as("attempt %d goes through", i).isEqualTo(401);
		}
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class StoreConfiguration {

		@Bean
		LaterStore rateLimitStore() {
			return new LaterStore();
		}

	}

	/** The in-process store, whose admissions complete 20 ms later on a thread of their own. */
	static class LaterStore implements RateLimitStore {

		final AtomicInteger completedLater = new AtomicInteger();

		final AtomicBoolean failing = new AtomicBoolean();

		private final CaffeineRateLimitStore store = new CaffeineRateLimitStore(10_000, RateLimitClock.SYSTEM);

		/**
		 * Its timer, as a client's (not {@code CompletableFuture.delayedExecutor}, whose timer on Java 25 spins on
		 * a lock as a task is added: a store must not do that on an event loop).
		 */
		private final ScheduledExecutorService thread = Executors.newSingleThreadScheduledExecutor((task) -> {
			Thread thread = new Thread(task, "store");
			thread.setDaemon(true);
			return thread;
		});

		@Override
		public CompletionStage<List<Receipt>> admitAllAsync(List<Acquisition> acquisitions) {
			CompletableFuture<List<Receipt>> step = new CompletableFuture<>();
			this.thread.schedule(() -> {
				assertThat(Thread.currentThread().getName()).isEqualTo("store");
				if (this.failing.get()) {
					step.completeExceptionally(new IllegalStateException("the store is down"));
					return;
				}
				this.completedLater.incrementAndGet();
				step.complete(this.store.admitAll(acquisitions));
			}, 20, TimeUnit.MILLISECONDS);
			return step;
		}

		@Override
		public List<Receipt> admitAll(List<Acquisition> acquisitions) {
			throw new AssertionError("WebFlux asks a store that admits without blocking on the event loop");
		}

		@Override
		public @Nullable Decision giveBack(Receipt receipt) {
			return this.store.giveBack(receipt);
		}

		@Override
		public Decision tryAcquire(Acquisition acquisition) {
			return this.store.tryAcquire(acquisition);
		}

		@Override
		public Decision release(Acquisition acquisition) {
			return this.store.release(acquisition);
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
