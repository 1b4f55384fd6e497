package io.github.ratelimit.redis.autoconfigure;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.availability.AvailabilityChangeEvent;
import org.springframework.boot.availability.ReadinessState;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ApplicationListener;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;

import io.github.ratelimit.redis.RedisRateLimitStore;
import io.github.ratelimit.redis.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The store's warm-up at start-up (rate-limit.store.redis.warm-up), on real redis-server processes:
 * it runs before the application reports readiness (and in a phase before the web server starts),
 * within its budget, leaves no key behind and sends nothing to on-failure; with Redis away (killed, or
 * paused so that it never answers) it delays the start-up by no more than its budget.
 */
class RedisWarmUpTests {

	@Test
	void runsBeforeReadinessWithinItsBudgetAndLeavesNoKey() {
		try (TestRedis redis = TestRedis.start()) {
			// Lettuce's and Netty's classes loaded first: a cold JVM's first connection can miss the start-up
			// check's second on a loaded machine, and the warm-up is then skipped.
			redis.flushAll();
			Started started = start(redis.port(), "300ms");
			try (ConfigurableApplicationContext context = started.context) {
				RedisRateLimitAutoConfiguration.StoreWarmUp warmUp = warmUp(context);
				RedisRateLimitStore store = context.getBean(RedisRateLimitStore.class);
				assertThat(warmUp.answered).isGreaterThan(0);
				assertThat(warmUp.endedAt).isLessThan(started.readyAt.get());
				// Between rounds the budget is checked; a round's calls wait at most the timeout (100 ms) each. The
				// rest is for a loaded machine's scheduling (two cores shared with other builds took 890 ms; tests
				// run in two JVMs per module).
				assertThat(Duration.ofNanos(warmUp.tookNanos)).isLessThan(Duration.ofMillis(300 + 3 * 100 + 1500));
				assertThat(store.fallbacks()).isZero();
				assertThat(store.errors()).isZero();
				assertThat(redis.keys()).noneMatch((key) -> key.contains("warm-up"));
			}
		}
	}

	@Test
	void runsInAPhaseBeforeTheWebServerStarts() {
		assertThat(RedisRateLimitAutoConfiguration.StoreWarmUp.PHASE)
			.isLessThan(WebServerApplicationContext.START_STOP_LIFECYCLE_PHASE);
	}

	@Test
	void offWithZero() {
		try (TestRedis redis = TestRedis.start()) {
			try (ConfigurableApplicationContext context = start(redis.port(), "0s").context) {
				assertThat(warmUp(context).answered).isEqualTo(-1);
			}
		}
	}

	@Test
	void withRedisKilledTheStartUpIsNotDelayed() {
		TestRedis redis = TestRedis.start();
		int port = redis.port();
		redis.close();
		try (ConfigurableApplicationContext context = start(port, "2s").context) {
			RedisRateLimitAutoConfiguration.StoreWarmUp warmUp = warmUp(context);
			assertThat(warmUp.answered).isZero();
			// The start-up check saw the refused connection before: no wait at all (not the budget of 2 s).
			assertThat(Duration.ofNanos(warmUp.tookNanos)).isLessThan(Duration.ofMillis(1000));
		}
	}

	@Test
	void withRedisNotAnsweringTheStartUpIsDelayedByNoMoreThanTheBudget() throws Exception {
		try (TestRedis redis = TestRedis.start()) {
			redis.freeze();
			ConfigurableApplicationContext context = null;
			try {
				long start = System.nanoTime();
				context = start(redis.port(), "500ms").context;
				long startUp = System.nanoTime() - start;
				RedisRateLimitAutoConfiguration.StoreWarmUp warmUp = warmUp(context);
				assertThat(warmUp.answered).isZero();
				// Its budget, and room for a loaded machine's scheduling.
				assertThat(Duration.ofNanos(warmUp.tookNanos)).isBetween(Duration.ofMillis(450), Duration.ofMillis(1500));
				// The builder's start-up check (1 s) and the warm-up's budget, plus the context's own time.
				assertThat(Duration.ofNanos(startUp)).isLessThan(Duration.ofMillis(1000 + 500 + 6000));
			}
			finally {
				// Resumed before the context closes: a connection to a paused server takes long to shut down.
				redis.thaw();
				if (context != null) {
					context.close();
				}
			}
		}
	}

	private static RedisRateLimitAutoConfiguration.StoreWarmUp warmUp(ConfigurableApplicationContext context) {
		return context.getBean("rateLimitRedisStoreWarmUp", RedisRateLimitAutoConfiguration.StoreWarmUp.class);
	}

	private static Started start(int port, String warmUp) {
		SpringApplication application = new SpringApplication(Config.class);
		application.setWebApplicationType(WebApplicationType.NONE);
		AtomicLong readyAt = new AtomicLong(Long.MAX_VALUE);
		application.addListeners((ApplicationListener<AvailabilityChangeEvent<?>>) (event) -> {
			if (event.getState() == ReadinessState.ACCEPTING_TRAFFIC) {
				readyAt.compareAndSet(Long.MAX_VALUE, System.nanoTime());
			}
		});
		ConfigurableApplicationContext context = application.run("--rate-limit.store.type=redis",
				"--spring.data.redis.port=" + port, "--rate-limit.store.redis.warm-up=" + warmUp,
				"--spring.main.banner-mode=off");
		return new Started(context, readyAt);
	}

	private record Started(ConfigurableApplicationContext context, AtomicLong readyAt) {
	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ DataRedisAutoConfiguration.class, RedisRateLimitAutoConfiguration.class })
	static class Config {

	}

}
