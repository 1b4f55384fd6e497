package io.github.ratelimit.redis.autoconfigure;

import java.time.Duration;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.binder.MeterBinder;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.data.redis.connection.RedisConnectionFactory;

import io.github.ratelimit.core.CaffeineRateLimitStore;
import io.github.ratelimit.core.RateLimitClock;
import io.github.ratelimit.core.RateLimitConfigurationException;
import io.github.ratelimit.core.RateLimitStore;
import io.github.ratelimit.redis.OnFailure;
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
		beforeName = "io.github.ratelimit.autoconfigure.RateLimitAutoConfiguration")
@ConditionalOnClass(value = RedisConnectionFactory.class,
		name = "io.github.ratelimit.autoconfigure.RateLimitAutoConfiguration")
@ConditionalOnBooleanProperty(name = "rate-limit.enabled", matchIfMissing = true)
@ConditionalOnProperty(name = "rate-limit.store.type", havingValue = "redis")
@EnableConfigurationProperties(RedisRateLimitProperties.class)
public final class RedisRateLimitAutoConfiguration {

	private static final String PREFIX = "rate-limit.store.redis";

	@Bean
	@ConditionalOnMissingBean(RateLimitStore.class)
	RedisRateLimitStore rateLimitStore(ObjectProvider<RedisConnectionFactory> connectionFactory,
			RedisRateLimitProperties properties, ObjectProvider<RateLimitClock> clock, Environment environment) {
		RedisConnectionFactory factory = connectionFactory.getIfUnique();
		if (factory == null) {
			throw new RateLimitConfigurationException("rate-limit.store.type",
					"store type 'redis' needs a single RedisConnectionFactory bean, and there is "
							+ (connectionFactory.stream().findAny().isPresent() ? "more than one" : "none"),
					"Add org.springframework.boot:spring-boot-starter-data-redis and set spring.data.redis.* (host and port, "
							+ "or cluster nodes), or declare one RedisConnectionFactory bean (or a RateLimitStore bean)");
		}
		positive(properties.getTimeout(), PREFIX + ".timeout", "e.g. 100ms");
		positive(properties.getBreaker().getProbeInterval(), PREFIX + ".breaker.probe-interval", "e.g. 1s");
		positive(properties.getOverridesPollInterval(), PREFIX + ".overrides-poll-interval", "e.g. 1s");
		positive(properties.getLeaseExpiry(), PREFIX + ".lease-expiry", "e.g. 5s");
		if (properties.getLeaseExpiry().toMillis() < 1) {
			throw new RateLimitConfigurationException(PREFIX + ".lease-expiry",
					"lease-expiry must be at least 1ms, was " + properties.getLeaseExpiry(),
					"Set how long a slot of a concurrency limit outlives its last refresh, e.g. 5s");
		}
		if (properties.getBreaker().getFailureThreshold() < 1) {
			throw new RateLimitConfigurationException(PREFIX + ".breaker.failure-threshold",
					"failure-threshold must be at least 1, was " + properties.getBreaker().getFailureThreshold(),
					"Set how many failed Redis calls in a row open the breaker, e.g. 3");
		}
		if (properties.getRejectionCache() == null || properties.getRejectionCache().isNegative()) {
			throw new RateLimitConfigurationException(PREFIX + ".rejection-cache",
					"rejection-cache must be zero or positive, was " + properties.getRejectionCache(),
					"Set how long a rejection Redis answered is kept in process, e.g. 1s (0 keeps none)");
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
		if (properties.getOnFailure() == OnFailure.LOCAL) {
			long maximumSize = Binder.get(environment)
				.bind("rate-limit.store.caffeine.maximum-size", Long.class)
				.orElse(1_000_000L);
			if (maximumSize <= 0) {
				throw new RateLimitConfigurationException("rate-limit.store.caffeine.maximum-size",
						"maximum-size must be positive, was " + maximumSize,
						"Set the most keys the local fallback tracks, e.g. 1000000");
			}
			builder.localStore(new CaffeineRateLimitStore(maximumSize, clock.getIfAvailable(() -> RateLimitClock.SYSTEM)));
		}
		try {
			return builder.build();
		}
		catch (IllegalStateException ex) {
			// Only fail-fast throws here: Redis refused the credentials or did not answer.
			throw new RateLimitConfigurationException(PREFIX + ".fail-fast", ex.getMessage(),
					"Correct spring.data.redis.* (or start Redis), or set " + PREFIX
							+ ".fail-fast=false to start anyway with on-failure deciding until Redis answers");
		}
	}

	private static void positive(Duration duration, String property, String example) {
		if (duration == null || duration.isNegative() || duration.isZero()) {
			throw new RateLimitConfigurationException(property, property.substring(property.lastIndexOf('.') + 1)
					+ " must be positive, was " + duration, "Set a positive duration, " + example);
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
						.tag("store", "redis")
						.tag("node", node)
						.register(registry);
					Gauge.builder("ratelimit.store.available", redis, (r) -> r.isAvailable(node) ? 1 : 0)
						.description("1 while the node's breaker lets calls through, 0 while it is open")
						.tag("store", "redis")
						.tag("node", node)
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
