package io.github.ratelimit.redis.autoconfigure;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;

import io.github.ratelimit.autoconfigure.RateLimitProperties;
import io.github.ratelimit.core.InvalidValueException;
import io.github.ratelimit.core.OnFailure;
import io.github.ratelimit.core.RateLimitClock;
import io.github.ratelimit.core.RateLimitConfigurationException;
import io.github.ratelimit.core.RateLimitStore;
import io.github.ratelimit.redis.RedisRateLimitStore;

/**
 * The Redis store when {@code rate-limit.store.type=redis}: a {@link RedisRateLimitStore} on the
 * application's {@link RedisConnectionFactory} (Lettuce by default, Jedis when chosen), configured by
 * {@code rate-limit.store.redis.*}. Runs after Spring Boot's Redis auto-configuration, which makes the
 * connection factory, and before the rate limiter's, which uses the store. A {@link RateLimitStore}
 * bean of the application's own wins. With Micrometer, the store's errors are counted per node as
 * {@code ratelimit.store.errors} (tag {@code node}), each node's breaker is the gauge
 * {@code ratelimit.store.available}, and fallbacks are {@code ratelimit.store.fallbacks}.
 */
@AutoConfiguration(afterName = "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration",
		beforeName = { "io.github.ratelimit.autoconfigure.RateLimitAutoConfiguration",
				"io.github.ratelimit.autoconfigure.RateLimitWebFluxAutoConfiguration" })
@ConditionalOnClass(value = RedisConnectionFactory.class,
		name = "io.github.ratelimit.autoconfigure.RateLimitAutoConfiguration")
@ConditionalOnBooleanProperty(name = "rate-limit.enabled", matchIfMissing = true)
@ConditionalOnProperty(name = "rate-limit.store.type", havingValue = "redis")
@EnableConfigurationProperties({ RedisRateLimitProperties.class, RateLimitProperties.class })
public final class RedisRateLimitAutoConfiguration {

	private static final String PREFIX = "rate-limit.store.redis";

	@Bean
	@ConditionalOnMissingBean(RateLimitStore.class)
	RedisRateLimitStore rateLimitStore(ObjectProvider<RedisConnectionFactory> connectionFactory,
			RedisRateLimitProperties properties, RateLimitProperties rateLimitProperties,
			ObjectProvider<RateLimitClock> clock) {
		RedisConnectionFactory factory = connectionFactory.getIfUnique();
		if (factory == null) {
			throw new RateLimitConfigurationException("rate-limit.store.type",
					"store type 'redis' needs a single RedisConnectionFactory bean, and there is "
							+ (connectionFactory.stream().findAny().isPresent() ? "more than one" : "none"),
					"Add org.springframework.boot:spring-boot-starter-data-redis and set spring.data.redis.* (host and port, "
							+ "or cluster nodes), or declare one RedisConnectionFactory bean (or a RateLimitStore bean)");
		}
		RedisRateLimitStore.Builder builder = RedisRateLimitStore.builder(factory)
			.keyPrefix(properties.getKeyPrefix())
			.timeout(properties.getTimeout())
			.onFailure(properties.getOnFailure())
			.failFast(properties.isFailFast())
			.rejectionCache(properties.getRejectionCache())
			.coalescing(properties.isCoalescing())
			.overridesPollInterval(properties.getOverridesPollInterval())
			.leaseExpiry(properties.getLeaseExpiry())
			.breaker(properties.getBreaker().getFailureThreshold(), properties.getBreaker().getProbeInterval());
		boolean local = properties.getOnFailure() == OnFailure.LOCAL;
		for (Map.Entry<String, RateLimitProperties.Policy> policy : rateLimitProperties.getPolicies().entrySet()) {
			OnFailure own = policy.getValue().onFailure();
			if (own != null) {
				// A configured policy's budget is the limit of its name (inline @RateLimited limits fail as the store does).
				builder.onFailure(policy.getKey(), own);
				local |= own == OnFailure.LOCAL;
			}
		}
		if (local) {
			// The local fallback is bounded like the in-process store: rate-limit.store.caffeine.*.
			builder.localStore(rateLimitProperties.getStore()
				.getCaffeine()
				.createStore(clock.getIfAvailable(() -> RateLimitClock.SYSTEM)));
		}
		try {
			return builder.build();
		}
		catch (InvalidValueException ex) {
			// The builder is the one home of what these values may be; it names the one it refuses as its property.
			throw new RateLimitConfigurationException(PREFIX + "." + ex.name(),
					ex.getMessage(), ex.action());
		}
		catch (IllegalStateException ex) {
			// Only fail-fast throws here: Redis refused the credentials or did not answer.
			throw new RateLimitConfigurationException(PREFIX + ".fail-fast", ex.getMessage(),
					"Correct spring.data.redis.* (or start Redis), or set " + PREFIX
							+ ".fail-fast=false to start anyway with on-failure deciding until Redis answers");
		}
	}

	/**
	 * Warms the store ({@link RedisRateLimitStore#warmUp(Duration)}) once every bean exists, in a
	 * lifecycle phase before the web server starts: the port opens, and readiness
	 * ({@code ReadinessState.ACCEPTING_TRAFFIC}) is reported, only after it.
	 */
	@Bean
	static SmartLifecycle rateLimitRedisStoreWarmUp(ObjectProvider<RedisRateLimitStore> store,
			RedisRateLimitProperties properties) {
		return new StoreWarmUp(store, properties.getWarmUp());
	}

	/** Runs the warm-up when the context starts (once), before the web server's phase. */
	static final class StoreWarmUp implements SmartLifecycle {

		/** Before the web server starts ({@code WebServerApplicationContext.START_STOP_LIFECYCLE_PHASE}). */
		static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 4096;

		private static final Log logger = LogFactory.getLog(StoreWarmUp.class);

		private final ObjectProvider<RedisRateLimitStore> store;

		private final Duration budget;

		private volatile boolean running;

		/** The calls Redis answered in the warm-up; -1 before it ran (or when it was off). */
		volatile int answered = -1;

		/** When the warm-up ended ({@link System#nanoTime()}), and how long it took. */
		volatile long endedAt;

		volatile long tookNanos;

		StoreWarmUp(ObjectProvider<RedisRateLimitStore> store, Duration budget) {
			this.store = store;
			this.budget = budget;
		}

		@Override
		public void start() {
			if (this.running) {
				return;
			}
			this.running = true;
			RedisRateLimitStore redis = this.store.getIfAvailable();
			if (redis == null || this.budget.isZero() || this.budget.isNegative()) {
				return;
			}
			long start = System.nanoTime();
			long fallbacks = redis.fallbacks();
			int answered = redis.warmUp(this.budget);
			this.endedAt = System.nanoTime();
			this.tookNanos = this.endedAt - start;
			this.answered = answered;
			long took = TimeUnit.NANOSECONDS.toMillis(this.tookNanos);
			if (answered > 0 && redis.fallbacks() == fallbacks) {
				logger.info("Rate limiter's Redis store warmed up: " + answered + " calls in " + took + " ms");
			}
			else if (answered > 0) {
				logger.info("Rate limiter's Redis store warm-up stopped after " + answered + " calls in " + took
						+ " ms: Redis was late (on-failure decided)");
			}
		}

		@Override
		public void stop() {
			this.running = false;
		}

		@Override
		public boolean isRunning() {
			return this.running;
		}

		@Override
		public int getPhase() {
			return PHASE;
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(MeterBinder.class)
	static class RedisStoreMetricsConfiguration {

		@Bean
		MeterBinder rateLimitRedisStoreMetrics(ObjectProvider<RedisRateLimitStore> store) {
			return (registry) -> store.ifAvailable((redis) -> {
				redis.onNode((node) -> {
					FunctionCounter.builder("ratelimit.store.errors", redis, (r) -> r.errors(node))
						.description("Redis calls of the rate limiter that failed or timed out, per node")
						.tags("store", "redis", "node", node)
						.register(registry);
					Gauge.builder("ratelimit.store.available", redis, (r) -> r.isAvailable(node) ? 1 : 0)
						.description("1 while the node's breaker lets calls through, 0 while it is open")
						.tags("store", "redis", "node", node)
						.register(registry);
				});
				FunctionCounter.builder("ratelimit.store.fallbacks", redis, RedisRateLimitStore::fallbacks)
					.description("Rate limit decisions made by on-failure instead of Redis")
					.tag("store", "redis")
					.register(registry);
			});
		}

	}
}
