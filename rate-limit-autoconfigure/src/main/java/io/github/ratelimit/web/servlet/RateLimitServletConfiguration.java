package io.github.ratelimit.web.servlet;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import io.micrometer.core.instrument.MeterRegistry;
import jakarta.servlet.DispatcherType;
import org.apache.catalina.Valve;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.ConfigurationPropertiesBindHandlerAdvisor;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.boot.tomcat.TomcatWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;
import org.springframework.web.servlet.HandlerMapping;
import org.springframework.web.servlet.handler.MappedInterceptor;

import io.github.ratelimit.actuate.endpoint.RateLimitsEndpoint;
import io.github.ratelimit.autoconfigure.RateLimitProperties;
import io.github.ratelimit.core.RateLimitClock;
import io.github.ratelimit.core.RateLimitConfigurationException;
import io.github.ratelimit.core.RateLimitStore;
import io.github.ratelimit.core.SharedPolicyOverrides;
import io.github.ratelimit.web.DecisionRecorder;
import io.github.ratelimit.web.RateLimitRejectionHandler;
import io.github.ratelimit.web.RequestDelay;
import io.github.ratelimit.web.clientip.ClientIpResolver;
import io.github.ratelimit.web.key.KeyResolvers;
import io.github.ratelimit.web.policy.AnnotatedEndpoints;
import io.github.ratelimit.web.policy.ChangeFieldsCheck;
import io.github.ratelimit.web.policy.ConfiguredLimits;
import io.github.ratelimit.web.policy.PolicyRefresh;
import io.github.ratelimit.web.policy.RateLimitPolicies;
import io.github.ratelimit.web.policy.RateLimitPolicy;
import io.github.ratelimit.web.policy.RateLimitPolicyResolver;

/**
 * The servlet pipeline of {@code RateLimitAutoConfiguration}, which imports it: the filter, the
 * interceptor and everything they decide with (policies, keys, client IPs, the endpoint), built from the
 * starter's internal packages. Public only to be imported; its beans are internals, not
 * extension points: none backs off for an application's bean, except the {@link DecisionRecorder} and the
 * actuator endpoint.
 */
@Configuration(proxyBeanMethods = false)
public class RateLimitServletConfiguration {

	/** Spring Security's filter chain's order unless {@code spring.security.filter.order} says otherwise. */
	private static final int SECURITY_FILTER_ORDER = -100;

	@Bean
	ClientIpResolver clientIpResolver(RateLimitProperties properties) {
		return ConfiguredLimits.clientIpResolver(properties);
	}

	@Bean
	@ConditionalOnBooleanProperty("rate-limit.delay.park")
	ParkingCheck rateLimitParkingCheck(ListableBeanFactory beanFactory) {
		return new ParkingCheck(beanFactory);
	}

	@Bean
	ForwardedHeadersCheck rateLimitForwardedHeadersCheck(ApplicationContext context,
			ObjectProvider<ClientIpResolver> clientIpResolver) {
		return new ForwardedHeadersCheck(context, clientIpResolver::getObject);
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
	AnnotatedEndpoints rateLimitAnnotatedEndpoints(ListableBeanFactory beanFactory, RateLimitPolicies policies,
			KeyResolvers keyResolvers) {
		return new AnnotatedEndpoints(() -> beanFactory.getBeanProvider(HandlerMapping.class).orderedStream().toList(),
				policies, keyResolvers);
	}

	@Bean
	RateLimitPolicyResolver rateLimitPolicyResolver(RateLimitProperties properties, RateLimitPolicies policies,
			AnnotatedEndpoints annotatedEndpoints) {
		return new RateLimitPolicyResolver(ConfiguredLimits.rules(properties, policies), annotatedEndpoints);
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
			if (policy.bans() && !rateLimitStore.bans()) {
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

	@Bean
	RateLimitInterceptor rateLimitInterceptor() {
		// Also one of the dispatcher's exception resolvers (the first): it decides requests whose handler
		// lookup failed.
		return new RateLimitInterceptor();
	}

	@Bean
	MappedInterceptor rateLimitMappedInterceptor(RateLimitInterceptor rateLimitInterceptor) {
		// A mapped interceptor joins every handler mapping, the actuator's included.
		return new MappedInterceptor(null, rateLimitInterceptor);
	}

	@Bean
	FilterRegistrationBean<RateLimitFilter> rateLimitFilter(RateLimitProperties properties,
			RateLimitPolicyResolver policyResolver, RequestLimiter limiter, RateLimitHeaders headers,
			RateLimitRejectionHandler rejectionHandler, RequestDelay delay, ClientIpResolver clientIpResolver,
			Environment environment) {
		// Ahead of Spring Security's filters, path rules are decided before them: an authentication
		// filter answers a request before any handler lookup, so it would check the password of a client
		// out of guesses and the answer would tell a right guess from a wrong one.
		boolean beforeSecurity = ClassUtils.isPresent("org.springframework.security.web.FilterChainProxy",
				RateLimitServletConfiguration.class.getClassLoader()) && properties.getFilterOrder() < environment
					.getProperty("spring.security.filter.order", Integer.class, SECURITY_FILTER_ORDER);
		RateLimitFilter filter = new RateLimitFilter(
				new RateLimitPipeline(policyResolver, limiter, headers, rejectionHandler, delay, beforeSecurity,
						properties.getDelay().isPark(), clientIpResolver));
		FilterRegistrationBean<RateLimitFilter> registration = new FilterRegistrationBean<>(filter);
		registration.setName("rateLimitFilter");
		registration.setOrder(properties.getFilterOrder());
		// Requests are limited on their original dispatch; the filter sees async dispatches only to
		// count, when they finish, the requests of policies that count failures or successes.
		registration.setDispatcherTypes(DispatcherType.REQUEST, DispatcherType.ASYNC);
		return registration;
	}

	private static String missingRedisDependency() {
		ClassLoader classLoader = RateLimitServletConfiguration.class.getClassLoader();
		if (!ClassUtils.isPresent("io.github.ratelimit.redis.RedisRateLimitStore", classLoader)) {
			return "Add io.github.ratelimit:rate-limit-redis and org.springframework.boot:spring-boot-starter-data-redis";
		}
		return "Add org.springframework.boot:spring-boot-starter-data-redis (rate-limit-redis runs on Spring Data Redis)";
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
				KeyResolvers keyResolvers) {
			return new RateLimitsEndpoint(policies, resolver, annotatedEndpoints, store, keyResolvers,
					properties.getMode() == RateLimitProperties.Mode.SHADOW);
		}

	}

	/**
	 * Embedded Tomcat: the connection's peer is recorded before Tomcat's {@code RemoteIpValve} (if
	 * any) rewrites it.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(name = { "org.apache.catalina.startup.Tomcat",
			"org.springframework.boot.tomcat.TomcatWebServerFactory" })
	static class TomcatConfiguration {

		@Bean
		WebServerFactoryCustomizer<TomcatWebServerFactory> rateLimitTomcatCustomizer(
				ObjectProvider<ClientIpResolver> clientIpResolver, ForwardedHeadersCheck check) {
			return (factory) -> {
				ClientIpResolver resolver = clientIpResolver.getObject();
				ConnectionPeerValve valve = new ConnectionPeerValve(
						resolver.readsForwardingHeader() ? resolver.getHeader() : null);
				// First of the engine's valves: customizers that run later can only append theirs.
				List<Valve> valves = new ArrayList<>(factory.getEngineValves());
				valves.add(0, valve);
				factory.setEngineValves(valves);
				factory.addContextCustomizers((context) -> {
					if (valve.isFirstIn(context)) {
						check.peerRecorded();
					}
				});
			};
		}

	}

}
