package io.github.ratelimit.parked;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.CaffeineRateLimitStore;
import io.github.ratelimit.core.Decision;
import io.github.ratelimit.core.RateLimitClock;
import io.github.ratelimit.core.RateLimitStore;
import io.github.ratelimit.core.Receipt;
import io.github.ratelimit.testsupport.Http;
import io.github.ratelimit.web.DecisionOutcome;
import io.github.ratelimit.web.DecisionRecorder;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Review of {@code RequestLimiter.decide} with a store whose step completes later, on its own thread (as
 * {@code LaterStoreStepTests}): the shadow policies' acquisitions (their keys) are computed inside
 * {@code thenCompose}, that is on the store's thread, where the request's thread-bound state is missing:
 * Spring Security's {@code getUserPrincipal()} reads the {@code SecurityContextHolder} of the thread. A
 * shadow policy keyed by {@code user} then keys alice and bob alike (their fallback), so bob is counted as
 * shadow-rejected on alice's budget: the metrics and logs of a shadow roll-out are wrong.
 */
@SpringBootTest(classes = ParkedApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "rate-limit.rules[0].path=/waiting/**", "rate-limit.rules[0].policies=open,watch",
				"rate-limit.policies.open.limit=1000", "rate-limit.policies.open.period=1h",
				"rate-limit.policies.open.key=global", "rate-limit.policies.watch.limit=1",
				"rate-limit.policies.watch.period=1h", "rate-limit.policies.watch.key=user",
				"rate-limit.policies.watch.shadow=true" })
@Import(LaterStepThreadTests.Later.class)
class LaterStepThreadTests {

	@LocalServerPort
	int port;

	@Autowired
	Later later;

	@Autowired
	InMemoryUserDetailsManager users;

	@Test
	void withAStepCompletedAtOnceEachUserHasItsShadowBudget() {
		this.later.atOnce.set(true);
		try {
			for (String user : List.of("carol", "dave")) {
				if (!this.users.userExists(user)) {
					this.users.createUser(User.withUsername(user).password("{noop}secret").roles("USER").build());
				}
			}
			Http http = new Http(this.port);
			int before = this.later.outcomes.getOrDefault("watch:" + DecisionOutcome.SHADOW_REJECTED, new AtomicInteger())
				.get();
			assertThat(http.get("/waiting/me", "Authorization", basic("carol", "secret")).body()).isEqualTo("carol");
			assertThat(http.get("/waiting/me", "Authorization", basic("dave", "secret")).body()).isEqualTo("dave");
			assertThat(this.later.outcomes.getOrDefault("watch:" + DecisionOutcome.SHADOW_REJECTED, new AtomicInteger())
				.get()).as("outcomes %s", this.later.outcomes).isEqualTo(before);
		}
		finally {
			this.later.atOnce.set(false);
		}
	}

	@Test
	void aShadowPolicyKeyedByUserKeysEachUser() {
		if (!this.users.userExists("bob")) {
			this.users.createUser(User.withUsername("bob").password("{noop}secret").roles("USER").build());
		}
		Http http = new Http(this.port);
		int before = this.later.outcomes.getOrDefault("watch:" + DecisionOutcome.SHADOW_REJECTED, new AtomicInteger())
			.get();
		assertThat(http.get("/waiting/me", "Authorization", ParkedRequestTests.basic("secret")).body()).isEqualTo("alice");
		assertThat(http.get("/waiting/me", "Authorization", basic("bob", "secret")).body()).isEqualTo("bob");
		assertThat(this.later.completedLater.get()).as("steps completed on the store's thread").isPositive();
		assertThat(this.later.outcomes.getOrDefault("watch:" + DecisionOutcome.SHADOW_REJECTED, new AtomicInteger())
			.get()).as("outcomes %s", this.later.outcomes).isEqualTo(before);
	}

	static String basic(String user, String password) {
		return "Basic " + java.util.Base64.getEncoder()
			.encodeToString((user + ":" + password).getBytes(java.nio.charset.StandardCharsets.UTF_8));
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class Later implements DecisionRecorder {

		final Map<String, AtomicInteger> outcomes = new ConcurrentHashMap<>();

		final AtomicInteger completedLater = new AtomicInteger();

		final java.util.concurrent.atomic.AtomicBoolean atOnce = new java.util.concurrent.atomic.AtomicBoolean();

		@Override
		public void decided(String policy, DecisionOutcome outcome) {
			this.outcomes.computeIfAbsent(policy + ":" + outcome, (k) -> new AtomicInteger()).incrementAndGet();
		}

		@Bean
		RateLimitStore rateLimitStore() {
			CaffeineRateLimitStore store = new CaffeineRateLimitStore(10_000, RateLimitClock.SYSTEM);
			ExecutorService thread = Executors.newSingleThreadExecutor((task) -> {
				Thread t = new Thread(task, "store");
				t.setDaemon(true);
				return t;
			});
			return new RateLimitStore() {

				@Override
				public CompletionStage<List<Receipt>> admitAllAsync(List<Acquisition> acquisitions) {
					if (Later.this.atOnce.get()) {
						return CompletableFuture.completedFuture(store.admitAll(acquisitions));
					}
					return CompletableFuture.supplyAsync(() -> {
						Later.this.completedLater.incrementAndGet();
						return store.admitAll(acquisitions);
					}, CompletableFuture.delayedExecutor(20, java.util.concurrent.TimeUnit.MILLISECONDS, thread));
				}

				@Override
				public List<Receipt> admitAll(List<Acquisition> acquisitions) {
					return store.admitAll(acquisitions);
				}

				@Override
				public @Nullable Decision giveBack(Receipt receipt) {
					return store.giveBack(receipt);
				}

				@Override
				public Decision tryAcquire(Acquisition acquisition) {
					return store.tryAcquire(acquisition);
				}

				@Override
				public Decision release(Acquisition acquisition) {
					return store.release(acquisition);
				}

				@Override
				public Decision peek(Acquisition acquisition) {
					return store.peek(acquisition);
				}

				@Override
				public void reset(String limitId, String key) {
					store.reset(limitId, key);
				}

				@Override
				public void resetAll() {
					store.resetAll();
				}

			};
		}

	}

}
