package io.github.ratelimit.web.servlet;

import java.util.ArrayList;
import java.util.List;

import jakarta.servlet.DispatcherType;
import org.apache.catalina.Valve;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.boot.tomcat.TomcatWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;
import org.springframework.web.servlet.HandlerMapping;
import org.springframework.web.servlet.handler.AbstractHandlerMethodMapping;
import org.springframework.web.servlet.handler.MappedInterceptor;

import io.github.ratelimit.autoconfigure.RateLimitProperties;
import io.github.ratelimit.web.RateLimitRejectionHandler;
import io.github.ratelimit.web.RequestDelay;
import io.github.ratelimit.web.clientip.ClientIpResolver;
import io.github.ratelimit.web.key.KeyResolvers;
import io.github.ratelimit.web.limiter.RateLimitHeaders;
import io.github.ratelimit.web.limiter.RequestLimiter;
import io.github.ratelimit.web.policy.AnnotatedEndpoints;
import io.github.ratelimit.web.policy.RateLimitPolicies;
import io.github.ratelimit.web.policy.RateLimitPolicyResolver;

/**
 * The servlet pipeline of {@code RateLimitAutoConfiguration}, which imports it with what both stacks decide
 * with: the filter, the interceptor, the annotated handlers of Spring MVC and the servlet container's
 * checks. Public only to be imported; its beans are internals, not extension points.
 */
@Configuration(proxyBeanMethods = false)
public class RateLimitServletConfiguration {

	/** Spring Security's filter chain's order unless {@code spring.security.filter.order} says otherwise. */
	private static final int SECURITY_FILTER_ORDER = -100;

	@Bean
	ParkingCheck rateLimitParkingCheck(ListableBeanFactory beanFactory, RateLimitProperties properties) {
		return new ParkingCheck(beanFactory, properties.getDelay().getPark());
	}

	@Bean
	ForwardedHeadersCheck rateLimitForwardedHeadersCheck(ApplicationContext context,
			ObjectProvider<ClientIpResolver> clientIpResolver) {
		return new ForwardedHeadersCheck(context, clientIpResolver::getObject);
	}

	@Bean
	AnnotatedEndpoints rateLimitAnnotatedEndpoints(ListableBeanFactory beanFactory, RateLimitPolicies policies,
			KeyResolvers keyResolvers) {
		// Spring MVC's handler methods, of every mapping (the actuator's included).
		return new AnnotatedEndpoints(() -> beanFactory.getBeanProvider(HandlerMapping.class).orderedStream()
			.filter(AbstractHandlerMethodMapping.class::isInstance)
			.flatMap((mapping) -> ((AbstractHandlerMethodMapping<?>) mapping).getHandlerMethods().values().stream())
			.toList(), policies, keyResolvers);
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
			ParkingCheck parking, Environment environment) {
		// Ahead of Spring Security's filters, path rules are decided before them: an authentication
		// filter answers a request before any handler lookup, so it would check the password of a client
		// out of guesses and the answer would tell a right guess from a wrong one.
		boolean beforeSecurity = ClassUtils.isPresent("org.springframework.security.web.FilterChainProxy",
				RateLimitServletConfiguration.class.getClassLoader()) && properties.getFilterOrder() < environment
					.getProperty("spring.security.filter.order", Integer.class, SECURITY_FILTER_ORDER);
		RateLimitFilter filter = new RateLimitFilter(
				new RateLimitPipeline(policyResolver, limiter, headers, rejectionHandler, delay, beforeSecurity,
						parking, clientIpResolver));
		FilterRegistrationBean<RateLimitFilter> registration = new FilterRegistrationBean<>(filter);
		registration.setName("rateLimitFilter");
		registration.setOrder(properties.getFilterOrder());
		// Requests are limited on their original dispatch; the filter sees async dispatches only to
		// count, when they finish, the requests of policies that count failures or successes.
		registration.setDispatcherTypes(DispatcherType.REQUEST, DispatcherType.ASYNC);
		return registration;
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
