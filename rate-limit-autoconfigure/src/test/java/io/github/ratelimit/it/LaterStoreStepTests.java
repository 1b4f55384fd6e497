package io.github.ratelimit.it;

import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
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

import static io.github.ratelimit.it.RateLimitEndToEndTests.header;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A store whose step completes later ({@link RateLimitStore#admitAllAsync}), on a thread of its own and
 * after a pause, as a store that asks a server does: through a running server, requests are decided as
 * with a store that answers at once, exactly under parallel guesses, and a step that fails later fails
 * open.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = "server.tomcat.threads.max=64")
@Import(LaterStoreStepTests.StoreConfiguration.class)
class LaterStoreStepTests {

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
				(i) -> () -> this.http.post("/guess/token-bucket", "user=mallory&password=guess&slowMillis=200").statusCode());
		assertThat(statuses).containsExactlyInAnyOrderEntriesOf(Map.of(401, 4, 429, 20));
		HttpResponse<String> locked = this.http.post("/guess/token-bucket", "user=mallory&password=right");
		assertThat(locked.statusCode()).as("locked out").isEqualTo(429);
		assertThat(header(locked, "Retry-After")).isNotNull();
		assertThat(this.store.completedLater.get() - before).as("steps completed on the store's thread").isEqualTo(25);
	}

	@Test
	void headersAreWrittenFromAStepThatCompletedLater() {
		HttpResponse<String> wrong = this.http.post("/guess/token-bucket", "user=peggy&password=wrong");
		assertThat(wrong.statusCode()).isEqualTo(401);
		assertThat(header(wrong, "X-RateLimit-Remaining")).isEqualTo("3");
		HttpResponse<String> right = this.http.post("/guess/token-bucket", "user=peggy&password=right");
		assertThat(right.statusCode()).isEqualTo(200);
		assertThat(header(right, "X-RateLimit-Remaining")).as("the success was given back").isEqualTo("3");
	}

	@Test
	void aStepThatFailsLaterFailsOpen() {
		this.store.failing.set(true);
		for (int i = 0; i < 6; i++) {
			assertThat(this.http.post("/guess/token-bucket", "user=trudy&password=wrong").statusCode())
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

		private final ExecutorService thread = Executors.newSingleThreadExecutor((task) -> new Thread(task, "store"));

		@Override
		public CompletionStage<List<Receipt>> admitAllAsync(List<Acquisition> acquisitions) {
			return CompletableFuture.supplyAsync(() -> {
				assertThat(Thread.currentThread().getName()).isEqualTo("store");
				if (this.failing.get()) {
					throw new IllegalStateException("the store is down");
				}
				this.completedLater.incrementAndGet();
				return this.store.admitAll(acquisitions);
			}, CompletableFuture.delayedExecutor(20, TimeUnit.MILLISECONDS, this.thread));
		}

		@Override
		public List<Receipt> admitAll(List<Acquisition> acquisitions) {
			throw new AssertionError("the exchange asks for the step that may complete later");
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
