package io.github.ratelimit.autoconfigure;


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
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingFilterBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.boot.tomcat.TomcatWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;
import org.springframework.web.servlet.DispatcherServlet;
import org.springframework.web.servlet.HandlerMapping;
import org.springframework.web.servlet.handler.MappedInterceptor;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerAdapter;

import io.github.ratelimit.actuate.RateLimitsEndpoint;
import io.github.ratelimit.core.RateLimitClock;
import io.github.ratelimit.core.RateLimitStore;
import io.github.ratelimit.core.caffeine.CaffeineRateLimitStore;
import io.github.ratelimit.metrics.MicrometerDecisionRecorder;
import io.github.ratelimit.web.AnnotatedEndpoints;
import io.github.ratelimit.web.ClientIpResolver;
import io.github.ratelimit.web.DecisionRecorder;
import io.github.ratelimit.web.KeyResolvers;
import io.github.ratelimit.web.ProblemDetailRejectionHandler;
import io.github.ratelimit.web.RateLimitConfigurationException;
import io.github.ratelimit.web.RateLimitFilter;
import io.github.ratelimit.web.RateLimitHeaders;
import io.github.ratelimit.web.RateLimitInterceptor;
import io.github.ratelimit.web.RateLimitPolicies;
import io.github.ratelimit.web.RateLimitPolicyResolver;
import io.github.ratelimit.web.RateLimitRejectionHandler;
import io.github.ratelimit.web.RejectionLog;
import io.github.ratelimit.web.RequestDelay;
import io.github.ratelimit.web.RequestLimiter;

/**
 * Rate limiting for Spring MVC applications: registers the {@link RateLimitFilter} and the
 * {@link RateLimitInterceptor} with the policies and rules of {@code rate-limit.*} and the
 * {@code @RateLimited} handlers. Every bean backs off when
 * the application declares its own; {@code rate-limit.enabled=false} turns all of it off.
 */
@AutoConfiguration(afterName = { "org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration",
		"org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
		"org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration" })
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass(DispatcherServlet.class)
@ConditionalOnBooleanProperty(name = "rate-limit.enabled", matchIfMissing = true)
@EnableConfigurationProperties(RateLimitProperties.class)
public final class RateLimitAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	RateLimitClock rateLimitClock() {
		return RateLimitClock.SYSTEM;
	}

	@Bean
	@ConditionalOnMissingBean
	ClientIpResolver clientIpResolver(RateLimitProperties properties) {
		return ConfiguredLimits.clientIpResolver(properties);
	}

	@Bean
	ForwardedHeadersCheck rateLimitForwardedHeadersCheck(ApplicationContext context,
			ObjectProvider<ClientIpResolver> clientIpResolver) {
		return new ForwardedHeadersCheck(context, clientIpResolver::getObject);
	}

	@Bean
	@ConditionalOnMissingBean
	KeyResolvers rateLimitKeyResolvers(ClientIpResolver clientIpResolver, ListableBeanFactory beanFactory) {
		return new KeyResolvers(clientIpResolver, beanFactory);
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimitPolicies rateLimitPolicies(RateLimitProperties properties, KeyResolvers keyResolvers,
			Environment environment) {
		ConfiguredLimits.checkPlanProperties(environment);
		return ConfiguredLimits.policies(properties, keyResolvers);
	}

	@Bean
	@ConditionalOnMissingBean
	AnnotatedEndpoints rateLimitAnnotatedEndpoints(ListableBeanFactory beanFactory, RateLimitPolicies policies,
			KeyResolvers keyResolvers) {
		return new AnnotatedEndpoints(() -> beanFactory.getBeanProvider(HandlerMapping.class).orderedStream().toList(),
				policies, keyResolvers);
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimitPolicyResolver rateLimitPolicyResolver(RateLimitProperties properties, RateLimitPolicies policies,
			AnnotatedEndpoints annotatedEndpoints) {
		return new RateLimitPolicyResolver(ConfiguredLimits.rules(properties, policies), annotatedEndpoints);
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimitHeaders rateLimitHeaders(RateLimitProperties properties) {
		return new RateLimitHeaders(ConfiguredLimits.headerStyles(properties));
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimitRejectionHandler rateLimitRejectionHandler(ObjectProvider<RequestMappingHandlerAdapter> handlerAdapter) {
		// The converters Spring MVC writes responses with: the application's JSON library and settings.
		return new ProblemDetailRejectionHandler(() -> {
			RequestMappingHandlerAdapter adapter = handlerAdapter.getIfUnique();
			return (adapter != null) ? adapter.getMessageConverters() : List.of();
		});
	}

	@Bean
	@ConditionalOnMissingBean
	RequestDelay rateLimitRequestDelay() {
		return RequestDelay.SLEEP;
	}

	@Bean
	@ConditionalOnMissingBean
	RejectionLog rateLimitRejectionLog(RateLimitClock clock) {
		return new RejectionLog(clock, Duration.ofMinutes(1));
	}

	@Bean
	@ConditionalOnMissingBean
	RequestLimiter rateLimitRequestLimiter(RateLimitProperties properties, ObjectProvider<RateLimitStore> store,
			ObjectProvider<DecisionRecorder> recorder, RejectionLog rejectionLog, KeyResolvers keyResolvers,
			ClientIpResolver clientIpResolver) {
		RateLimitStore rateLimitStore = store.getIfAvailable();
		if (rateLimitStore == null) {
			throw new RateLimitConfigurationException("rate-limit.store.type",
					"store type '" + properties.getStore().getType().name().toLowerCase(Locale.ROOT)
							+ "' has no store on the classpath",
					missingRedisDependency() + ", or use rate-limit.store.type=caffeine");
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
				ConfiguredLimits.exemptions(properties, keyResolvers, clientIpResolver));
	}

	@Bean
	RateLimitInterceptor rateLimitInterceptor(RateLimitPolicyResolver policyResolver, RequestLimiter limiter,
			RateLimitHeaders headers, RateLimitRejectionHandler rejectionHandler, RequestDelay delay) {
		// Also one of the dispatcher's exception resolvers (the first): it decides requests whose handler
		// lookup failed.
		return new RateLimitInterceptor(policyResolver, limiter, headers, rejectionHandler, delay);
	}

	@Bean
	MappedInterceptor rateLimitMappedInterceptor(RateLimitInterceptor rateLimitInterceptor) {
		// A mapped interceptor joins every handler mapping, the actuator's included.
		return new MappedInterceptor(null, rateLimitInterceptor);
	}

	@Bean
	@ConditionalOnMissingFilterBean(RateLimitFilter.class)
	FilterRegistrationBean<RateLimitFilter> rateLimitFilter(RateLimitProperties properties,
			RateLimitInterceptor rateLimitInterceptor) {
		RateLimitFilter filter = new RateLimitFilter(rateLimitInterceptor);
		FilterRegistrationBean<RateLimitFilter> registration = new FilterRegistrationBean<>(filter);
		registration.setName("rateLimitFilter");
		registration.setOrder(properties.getFilterOrder());
		// Requests are limited on their original dispatch; the filter sees async dispatches only to
		// count, when they finish, the requests of policies that count failures or successes.
		registration.setDispatcherTypes(DispatcherType.REQUEST, DispatcherType.ASYNC);
		return registration;
	}

	private static String missingRedisDependency() {
		ClassLoader classLoader = RateLimitAutoConfiguration.class.getClassLoader();
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

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(Endpoint.class)
	@ConditionalOnAvailableEndpoint(RateLimitsEndpoint.class)
	static class EndpointConfiguration {

		@Bean
		@ConditionalOnMissingBean
		RateLimitsEndpoint rateLimitsEndpoint(RateLimitProperties properties, RateLimitPolicies policies,
				RateLimitPolicyResolver resolver, AnnotatedEndpoints annotatedEndpoints, RateLimitStore store) {
			return new RateLimitsEndpoint(policies, resolver, annotatedEndpoints, store,
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

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnProperty(name = "rate-limit.store.type", havingValue = "caffeine", matchIfMissing = true)
	static class CaffeineStoreConfiguration {

		@Bean
		@ConditionalOnMissingBean(RateLimitStore.class)
		CaffeineRateLimitStore rateLimitStore(RateLimitProperties properties, RateLimitClock clock) {
			return properties.getStore().getCaffeine().createStore(clock);
		}

	}

}
