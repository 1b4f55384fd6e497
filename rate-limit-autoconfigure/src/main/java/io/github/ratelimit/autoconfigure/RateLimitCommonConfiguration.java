package io.github.ratelimit.autoconfigure;

import java.time.Duration;
import java.util.Locale;

import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.ConfigurationPropertiesBindHandlerAdvisor;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;
import org.springframework.web.context.WebApplicationContext;

import io.github.ratelimit.actuate.endpoint.RateLimitsEndpoint;
import io.github.ratelimit.core.CaffeineRateLimitStore;
import io.github.ratelimit.core.RateLimitClock;
import io.github.ratelimit.core.RateLimitConfigurationException;
import io.github.ratelimit.core.RateLimitStore;
import io.github.ratelimit.core.SharedPolicyOverrides;
import io.github.ratelimit.web.DecisionRecorder;
import io.github.ratelimit.web.clientip.ClientIpResolver;
import io.github.ratelimit.web.key.KeyResolvers;
import io.github.ratelimit.web.limiter.MicrometerDecisionRecorder;
import io.github.ratelimit.web.limiter.RateLimitHeaders;
import io.github.ratelimit.web.limiter.RejectionLog;
import io.github.ratelimit.web.limiter.RequestLimiter;
import io.github.ratelimit.web.policy.AnnotatedEndpoints;
import io.github.ratelimit.web.policy.ChangeFieldsCheck;
import io.github.ratelimit.web.policy.ConfiguredLimits;
import io.github.ratelimit.web.policy.HandlerPolicies;
import io.github.ratelimit.web.policy.PolicyRefresh;
import io.github.ratelimit.web.policy.RateLimitPolicies;
import io.github.ratelimit.web.policy.RateLimitPolicy;
import io.github.ratelimit.web.policy.RateLimitPolicyResolver;

/**
 * What both web stacks decide with, imported by the servlet and the reactive auto-configuration: the clock
 * and the in-process store (each backs off for an application's own), client IPs, keys, policies and the
 * resolver of a request's policies, the limiter, headers, the rejection log, metrics, refresh and the
 * actuator endpoint. A stack's own configuration adds how its handlers are found
 * ({@link AnnotatedEndpoints}) and its adapters. Its beans are internals, not extension points: none backs
 * off for an application's bean, except the clock, the store, the {@link DecisionRecorder} and the endpoint.
 */
@Configuration(proxyBeanMethods = false)
class RateLimitCommonConfiguration {

	@Bean
	@ConditionalOnMissingBean
	RateLimitClock rateLimitClock() {
		return RateLimitClock.SYSTEM;
	}

	@Bean
	ClientIpResolver clientIpResolver(RateLimitProperties properties) {
		return ConfiguredLimits.clientIpResolver(properties);
	}

	@Bean
	KeyResolvers rateLimitKeyResolvers(ClientIpResolver clientIpResolver, ListableBeanFactory beanFactory) {
		return new KeyResolvers(clientIpResolver, beanFactory);
	}

	/** The checks of rate-limit.policies that binding cannot make, made as the properties are bound. */
	@Bean
	static ConfigurationPropertiesBindHandlerAdvisor rateLimitPolicyPropertiesCheck(Environment environment) {
		return (handler) -> new ConfiguredLimits.PolicyPropertiesCheck(handler, environment);
	}

	@Bean
	RateLimitPolicies rateLimitPolicies(RateLimitProperties properties, KeyResolvers keyResolvers,
			ObjectProvider<RateLimitStore> store) {
		RateLimitPolicies policies = ConfiguredLimits.policies(properties, keyResolvers);
		// A store shared by every instance (Redis) keeps runtime changes for all of them.
		if (store.getIfUnique() instanceof SharedPolicyOverrides overrides) {
			policies.shareThrough(overrides);
		}
		return policies;
	}

	@Bean
	RateLimitPolicyResolver rateLimitPolicyResolver(RateLimitProperties properties, RateLimitPolicies policies,
			ObjectProvider<HandlerPolicies> handlers) {
		// The annotated handler methods, and a gateway's routes when there is one.
		return new RateLimitPolicyResolver(ConfiguredLimits.rules(properties, policies),
				handlers.orderedStream().toList());
	}

	@Bean
	RateLimitHeaders rateLimitHeaders(RateLimitProperties properties) {
		return new RateLimitHeaders(ConfiguredLimits.headerStyles(properties));
	}

	@Bean
	RejectionLog rateLimitRejectionLog(RateLimitClock clock) {
		return new RejectionLog(clock, Duration.ofMinutes(1));
	}

	@Bean
	RequestLimiter rateLimitRequestLimiter(RateLimitProperties properties, ObjectProvider<RateLimitStore> store,
			ObjectProvider<DecisionRecorder> recorder, RejectionLog rejectionLog, KeyResolvers keyResolvers,
			ClientIpResolver clientIpResolver, RateLimitPolicies policies) {
		RateLimitStore rateLimitStore = store.getIfAvailable();
		if (rateLimitStore == null) {
			throw new RateLimitConfigurationException("rate-limit.store.type",
					"store type '" + properties.getStore().getType().name().toLowerCase(Locale.ROOT)
							+ "' has no store on the classpath",
					missingRedisDependency() + ", or use rate-limit.store.type=caffeine");
		}
		for (RateLimitPolicy policy : policies.all()) {
			if (policy.ban() != null && !rateLimitStore.bans()) {
				throw new RateLimitConfigurationException("rate-limit.policies." + policy.name() + ".ban",
						"the store " + rateLimitStore.getClass().getName() + " does not ban keys",
						"Use rate-limit.store.type caffeine or redis, or remove ban");
			}
		}
		int maxWaiting = properties.getDelay().getMaxWaiting();
		if (maxWaiting <= 0) {
			throw new RateLimitConfigurationException("rate-limit.delay.max-waiting",
					"max-waiting must be positive, was " + maxWaiting,
					"Set the most requests that may wait for their turn at once, e.g. 100 (policies that should "
							+ "never wait use on-limit: reject)");
		}
		return new RequestLimiter(rateLimitStore, recorder.getIfAvailable(() -> DecisionRecorder.NONE), rejectionLog,
				properties.getMode() == RateLimitProperties.Mode.SHADOW, maxWaiting,
				ConfiguredLimits.exemptions(properties, keyResolvers));
	}

	private static String missingRedisDependency() {
		ClassLoader classLoader = RateLimitCommonConfiguration.class.getClassLoader();
		return ClassUtils.isPresent("io.github.ratelimit.redis.RedisRateLimitStore", classLoader)
				? "Add org.springframework.boot:spring-boot-starter-data-redis (rate-limit-redis runs on Spring Data Redis)"
				: "Add io.github.ratelimit:rate-limit-redis and org.springframework.boot:spring-boot-starter-data-redis";
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnProperty(name = "rate-limit.store.type", havingValue = "caffeine", matchIfMissing = true)
	static class CaffeineStoreConfiguration {

		@Bean
		@ConditionalOnMissingBean(RateLimitStore.class)
		CaffeineRateLimitStore rateLimitStore(RateLimitProperties properties, RateLimitClock clock) {
			return properties.getStore().getCaffeine().createStore(clock);
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(MeterRegistry.class)
	@ConditionalOnBean(MeterRegistry.class)
	static class MetricsConfiguration {

		@Bean
		@ConditionalOnMissingBean
		DecisionRecorder rateLimitDecisionRecorder(MeterRegistry registry) {
			return new MicrometerDecisionRecorder(registry);
		}

	}

	/**
	 * Spring Cloud's refresh: a refreshed {@code rate-limit.policies.*} changes the configured values of
	 * the named policies at run time.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(name = "org.springframework.cloud.context.environment.EnvironmentChangeEvent")
	static class RefreshConfiguration {

		@Bean
		PolicyRefresh rateLimitPolicyRefresh(Environment environment, RateLimitPolicies policies) {
			return new PolicyRefresh(environment, policies);
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(Endpoint.class)
	@ConditionalOnAvailableEndpoint(RateLimitsEndpoint.class)
	static class EndpointConfiguration {

		@Bean
		ChangeFieldsCheck rateLimitsChangeFieldsCheck() {
			return new ChangeFieldsCheck();
		}

		@Bean
		RateLimitsEndpoint rateLimitsEndpoint(RateLimitProperties properties, RateLimitPolicies policies,
				RateLimitPolicyResolver resolver, AnnotatedEndpoints annotatedEndpoints, RateLimitStore store,
				KeyResolvers keyResolvers, ApplicationContext context) {
			// A servlet application's context is a WebApplicationContext; on WebFlux, Spring Boot's mapping gives a
			// key's operations the rest of the path from the policy's segment on.
			return new RateLimitsEndpoint(policies, resolver, annotatedEndpoints, store, keyResolvers,
					properties.getMode() == RateLimitProperties.Mode.SHADOW, !(context instanceof WebApplicationContext));
		}

	}

}
