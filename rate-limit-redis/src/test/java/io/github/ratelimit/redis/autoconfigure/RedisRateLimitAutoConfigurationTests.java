package io.github.ratelimit.redis.autoconfigure;

import java.time.Duration;
import java.util.List;

import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.data.redis.connection.RedisConnectionFactory;

import io.github.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import io.github.ratelimit.autoconfigure.RateLimitProperties;
import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.CaffeineRateLimitStore;
import io.github.ratelimit.core.Decision;
import io.github.ratelimit.core.OnFailure;
import io.github.ratelimit.core.RateLimitStore;
import io.github.ratelimit.redis.RedisRateLimitStore;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Redis store's auto-configuration: on when {@code rate-limit.store.type=redis}, on Spring Boot's
 * connection factory; off otherwise; a store of the application's own wins; missing Spring Data Redis
 * and bad values fail the start naming what to do. No Redis is contacted: nothing decides here.
 */
class RedisRateLimitAutoConfigurationTests {

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
				RedisRateLimitAutoConfiguration.class, RateLimitAutoConfiguration.class))
		.withPropertyValues("spring.data.redis.port=1", "rate-limit.policies.api.limit=10",
				"rate-limit.policies.api.period=1m", "rate-limit.rules[0].path=/api/**",
				"rate-limit.rules[0].policies=api");

	@Test
	void redisStoreOnTheApplicationsConnectionFactory() {
		this.runner.withPropertyValues("rate-limit.store.type=redis").run((context) -> {
			assertThat(context).hasSingleBean(RedisRateLimitStore.class).hasSingleBean(RedisConnectionFactory.class);
			assertThat(context).doesNotHaveBean(CaffeineRateLimitStore.class);
			assertThat(context.getBean(RedisRateLimitStore.class).redisKey("api", "k")).isEqualTo("rate-limit:{api:k}");
			assertThat(context).getBean("rateLimitFilter", FilterRegistrationBean.class)
				.extracting((registration) -> registration.getFilter().getClass().getName())
				.isEqualTo("io.github.ratelimit.web.servlet.RateLimitFilter");
		});
	}

	@Test
	void propertiesBind() {
		this.runner
			.withPropertyValues("rate-limit.store.type=redis", "rate-limit.store.redis.key-prefix=rl:",
					"rate-limit.store.redis.timeout=250ms", "rate-limit.store.redis.on-failure=local",
					"rate-limit.store.redis.breaker.failure-threshold=5",
					"rate-limit.store.redis.breaker.probe-interval=2s", "rate-limit.store.redis.coalescing=false",
					"rate-limit.store.redis.rejection-cache=0s", "rate-limit.store.redis.fail-fast=false",
					"rate-limit.store.redis.overrides-poll-interval=250ms")
			.run((context) -> {
				RedisRateLimitProperties properties = context.getBean(RedisRateLimitProperties.class);
				assertThat(properties.getTimeout()).isEqualTo(Duration.ofMillis(250));
				assertThat(properties.getOnFailure()).isEqualTo(OnFailure.LOCAL);
				assertThat(properties.getBreaker().getFailureThreshold()).isEqualTo(5);
				assertThat(properties.isCoalescing()).isFalse();
				assertThat(properties.getRejectionCache()).isZero();
				assertThat(properties.getOverridesPollInterval()).isEqualTo(Duration.ofMillis(250));
				assertThat(properties.isFailFast()).isFalse();
				assertThat(context.getBean(RedisRateLimitStore.class).redisKey("api", "k")).isEqualTo("rl:{api:k}");
			});
	}

	@Test
	void caffeineByDefault() {
		this.runner.run((context) -> {
			assertThat(context).doesNotHaveBean(RedisRateLimitStore.class).hasSingleBean(CaffeineRateLimitStore.class);
		});
	}

	@Test
	void offWhenRateLimitingIsDisabled() {
		this.runner.withPropertyValues("rate-limit.store.type=redis", "rate-limit.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(RateLimitStore.class));
	}

	@Test
	void theApplicationsStoreWins() {
		RateLimitStore own = new RateLimitStore() {
			@Override
			public Decision tryAcquire(Acquisition acquisition) {
				return Decision.allowed(1, 1, 0);
			}

			@Override
			public Decision release(Acquisition acquisition) {
				return Decision.allowed(1, 1, 0);
			}

			@Override
			public Decision peek(Acquisition acquisition) {
				return Decision.allowed(1, 1, 0);
			}

			@Override
			public void reset(String limitId, String key) {
			}
		};
		this.runner.withPropertyValues("rate-limit.store.type=redis")
			.withBean(RateLimitStore.class, () -> own)
			.run((context) -> assertThat(context).doesNotHaveBean(RedisRateLimitStore.class)
				.getBean(RateLimitStore.class)
				.isSameAs(own));
	}

	@Test
	void withoutSpringDataRedisTheFailureSaysWhichDependencyToAdd() {
		new WebApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(RedisRateLimitAutoConfiguration.class, RateLimitAutoConfiguration.class))
			.withPropertyValues("rate-limit.store.type=redis")
			.withClassLoader(new FilteredClassLoader("org.springframework.data.redis"))
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("rate-limit.store.type: store type 'redis' has no store on the classpath")
				.hasMessageContaining("Add org.springframework.boot:spring-boot-starter-data-redis (rate-limit-redis runs on Spring Data Redis)"));
	}

	@Test
	void withoutAConnectionFactoryTheFailureSaysWhatToAdd() {
		new WebApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(RedisRateLimitAutoConfiguration.class, RateLimitAutoConfiguration.class))
			.withPropertyValues("rate-limit.store.type=redis")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("store type 'redis' needs a single RedisConnectionFactory bean, and there is none")
				.hasMessageContaining("Add org.springframework.boot:spring-boot-starter-data-redis"));
	}

	@Test
	void aPolicysOwnOnFailureBindsOnBothStores() {
		for (String type : List.of("redis", "caffeine")) {
			this.runner.withPropertyValues("rate-limit.store.type=" + type, "rate-limit.policies.api.on-failure=local")
				.run((context) -> {
					assertThat(context).hasNotFailed();
					assertThat(context.getBean(RateLimitProperties.class).getPolicies().get("api").onFailure())
						.isEqualTo(OnFailure.LOCAL);
				});
		}
	}

	@Test
	void aPolicyThatFallsBackLocallyBoundsItsLocalStoreLikeTheStoresOwnChoice() {
		this.runner
			.withPropertyValues("rate-limit.store.type=redis", "rate-limit.policies.api.on-failure=local",
					"rate-limit.store.caffeine.maximum-size=0")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("rate-limit.store.caffeine.maximum-size: maximum size must be positive, was 0"));
	}

	@Test
	void aBadPolicyOnFailureFailsNamingTheProperty() {
		this.runner.withPropertyValues("rate-limit.store.type=redis", "rate-limit.policies.api.on-failure=maybe")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.hasStackTraceContaining("rate-limit.policies.api.on-failure"));
	}

	@Test
	void badValuesFailNamingTheProperty() {
		// The store's builder checks these values (their one home); the failure names the property.
		for (List<String> bad : List.of(List.of("rate-limit.store.redis.timeout=0s", "rate-limit.store.redis.timeout: timeout must be positive"),
				List.of("rate-limit.store.redis.breaker.failure-threshold=0",
						"rate-limit.store.redis.breaker.failure-threshold: failure threshold must be at least 1, was 0. Set how many"),
				List.of("rate-limit.store.redis.rejection-cache=-1s",
						"rate-limit.store.redis.rejection-cache: rejection cache must be zero or positive"),
				List.of("rate-limit.store.redis.breaker.probe-interval=-1s",
						"rate-limit.store.redis.breaker.probe-interval: probe interval must be positive"),
				List.of("rate-limit.store.redis.overrides-poll-interval=0s",
						"rate-limit.store.redis.overrides-poll-interval: overrides poll interval must be at least 100 ms"),
				List.of("rate-limit.store.redis.overrides-poll-interval=1ns",
						"rate-limit.store.redis.overrides-poll-interval: overrides poll interval must be at least 100 ms"),
				List.of("rate-limit.store.redis.lease-expiry=0s",
						"rate-limit.store.redis.lease-expiry: lease expiry must be at least 100 ms"),
				List.of("rate-limit.store.redis.lease-expiry=1ms",
						"rate-limit.store.redis.lease-expiry: lease expiry must be at least 100 ms"),
				// The local fallback is bounded by the in-process store's property, bound once with the others.
				List.of("rate-limit.store.caffeine.maximum-size=0",
						"rate-limit.store.caffeine.maximum-size: maximum size must be positive, was 0"))) {
			this.runner.withPropertyValues("rate-limit.store.type=redis", "rate-limit.store.redis.on-failure=local", bad.get(0))
				.run((context) -> assertThat(context).hasFailed().getFailure().rootCause().hasMessageContaining(bad.get(1)));
		}
	}

	@Test
	void countsErrorsAndFallbacksWithMicrometer() {
		this.runner.withPropertyValues("rate-limit.store.type=redis").run((context) -> {
			SimpleMeterRegistry registry = new SimpleMeterRegistry();
			context.getBean(MeterBinder.class).bindTo(registry);
			assertThat(registry.get("ratelimit.store.errors").tag("node", "localhost:1").functionCounter().count()).isZero();
			assertThat(registry.get("ratelimit.store.available").tag("node", "localhost:1").gauge().value()).isEqualTo(1);
			assertThat(registry.get("ratelimit.store.fallbacks").functionCounter().count()).isZero();
		});
	}
}
