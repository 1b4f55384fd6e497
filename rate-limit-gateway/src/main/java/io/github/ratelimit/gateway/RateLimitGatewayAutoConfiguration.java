package io.github.ratelimit.gateway;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.cloud.gateway.filter.factory.GatewayFilterFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.http.codec.FormHttpMessageReader;
import org.springframework.http.codec.ServerCodecConfigurer;

import io.github.ratelimit.web.policy.RateLimitPolicies;

/**
 * Spring Cloud Gateway on WebFlux: the {@code RateLimited} route filter, the routes' policies decided with the
 * path rules ({@link GatewayRoutePolicies}), forms that a {@code param:} key reads still forwarded whole
 * ({@link FormBodyCache}); the {@code RateLimiter} for {@code RequestRateLimiter} routes is
 * {@link RateLimitGatewayRateLimiterAutoConfiguration}'s. With {@code rate-limit.enabled=false} the routes' filters
 * let every request through.
 */
@AutoConfiguration(afterName = "io.github.ratelimit.autoconfigure.RateLimitWebFluxAutoConfiguration")
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnClass(GatewayFilterFactory.class)
public final class RateLimitGatewayAutoConfiguration {

	@Bean
	GatewayRoutePolicies rateLimitGatewayRoutePolicies() {
		return new GatewayRoutePolicies();
	}

	@Bean
	RateLimitedGatewayFilterFactory rateLimitedGatewayFilterFactory(ObjectProvider<RateLimitPolicies> policies,
			GatewayRoutePolicies routes) {
		// Without the starter's policies (rate-limit.enabled=false) the routes' filters let everything through.
		return new RateLimitedGatewayFilterFactory(policies.getIfAvailable(), routes);
	}

	@Bean
	@ConditionalOnBean(RateLimitPolicies.class)
	FormBodyCache rateLimitFormBodyCache(ServerCodecConfigurer codecs) {
		FormHttpMessageReader reader = codecs.getReaders().stream()
			.filter(FormHttpMessageReader.class::isInstance)
			.map(FormHttpMessageReader.class::cast)
			.findFirst()
			.orElseGet(FormHttpMessageReader::new);
		return new FormBodyCache(reader);
	}

}
