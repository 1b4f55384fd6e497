package io.github.ratelimit.web.reactive;

import java.util.List;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.http.codec.ServerCodecConfigurer;
import org.springframework.util.ClassUtils;
import org.springframework.web.reactive.HandlerAdapter;
import org.springframework.web.reactive.HandlerMapping;
import org.springframework.web.reactive.result.method.AbstractHandlerMethodMapping;

import io.github.ratelimit.autoconfigure.RateLimitProperties;
import io.github.ratelimit.core.RateLimitStore;
import io.github.ratelimit.web.ReactiveRateLimitRejectionHandler;
import io.github.ratelimit.web.clientip.ClientIpResolver;
import io.github.ratelimit.web.key.KeyResolvers;
import io.github.ratelimit.web.limiter.RateLimitHeaders;
import io.github.ratelimit.web.limiter.RequestLimiter;
import io.github.ratelimit.web.policy.AnnotatedEndpoints;
import io.github.ratelimit.web.policy.RateLimitPolicies;
import io.github.ratelimit.web.policy.RateLimitPolicyResolver;

/**
 * The WebFlux pipeline of {@code RateLimitWebFluxAutoConfiguration}, which imports it with what both stacks
 * decide with: the web filter, the handler adapter that decides once the handler is found, and the
 * annotated handlers of WebFlux. Public only to be imported; its beans are internals, not extension points.
 */
@Configuration(proxyBeanMethods = false)
public class RateLimitReactiveConfiguration {

	/** Spring Security's {@code WebFilterChainProxy}'s order on WebFlux. */
	private static final int SECURITY_FILTER_ORDER = -100;

	@Bean
	AnnotatedEndpoints rateLimitAnnotatedEndpoints(ListableBeanFactory beanFactory, RateLimitPolicies policies,
			KeyResolvers keyResolvers) {
		// WebFlux's handler methods, of every mapping (the actuator's included).
		return new AnnotatedEndpoints(() -> beanFactory.getBeanProvider(HandlerMapping.class).orderedStream()
			.filter(AbstractHandlerMethodMapping.class::isInstance)
			.flatMap((mapping) -> ((AbstractHandlerMethodMapping<?>) mapping).getHandlerMethods().values().stream())
			.toList(), policies, keyResolvers);
	}

	@Bean
	@ConditionalOnClass(name = "org.springframework.boot.web.server.reactive.ReactiveWebServerFactory")
	ReactivePeerCheck rateLimitReactivePeerCheck(ListableBeanFactory beanFactory, Environment environment,
			ClientIpResolver clientIpResolver) {
		return new ReactivePeerCheck(beanFactory, environment, clientIpResolver);
	}

	@Bean
	RateLimitHandlerAdapter rateLimitHandlerAdapter(ListableBeanFactory beanFactory) {
		return new RateLimitHandlerAdapter(() -> beanFactory.getBeanProvider(HandlerAdapter.class)
			.orderedStream()
			.filter((adapter) -> !(adapter instanceof RateLimitHandlerAdapter))
			.toList());
	}

	/** The filter; an application's own bean of this name (a filter wrapping or replacing it) wins. */
	@Bean
	@ConditionalOnMissingBean(name = "rateLimitWebFilter")
	RateLimitWebFilter rateLimitWebFilter(RateLimitProperties properties, RateLimitPolicyResolver policyResolver,
			RequestLimiter limiter, RateLimitHeaders headers, ClientIpResolver clientIpResolver, RateLimitStore store,
			ObjectProvider<ServerCodecConfigurer> codecs, ObjectProvider<ReactiveRateLimitRejectionHandler> rejections) {
		// Ahead of Spring Security's filters, path rules are decided before them, as on the servlet side.
		boolean beforeSecurity = ClassUtils.isPresent("org.springframework.security.web.server.WebFilterChainProxy",
				RateLimitReactiveConfiguration.class.getClassLoader())
				&& properties.getFilterOrder() < SECURITY_FILTER_ORDER;
		ProblemWriter problems = new ProblemWriter(() -> {
			ServerCodecConfigurer configurer = codecs.getIfAvailable();
			return (configurer != null) ? configurer.getWriters() : List.of();
		});
		return new RateLimitWebFilter(new ReactivePipeline(policyResolver, limiter, headers, problems,
				rejections.getIfUnique(), clientIpResolver, beforeSecurity, StoreCalls.of(store)),
				properties.getFilterOrder());
	}
}
