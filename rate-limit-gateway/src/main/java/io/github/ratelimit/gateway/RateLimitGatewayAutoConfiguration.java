package io.github.ratelimit.gateway;

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
 * {@link RateLimitGatewayRateLimiterAutoConfiguration}'s. Only with the starter's WebFlux configuration (so not with
 * {@code rate-limit.enabled=false}).
 */
@AutoConfiguration(afterName = "io.github.ratelimit.autoconfigure.RateLimitWebFluxAutoConfiguration")
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnClass(GatewayFilterFactory.class)
@ConditionalOnBean(RateLimitPolicies.class)
public final class RateLimitGatewayAutoConfiguration {

	@Bean
	GatewayRoutePolicies rateLimitGatewayRoutePolicies() {
		return new GatewayRoutePolicies();
	}

	@Bean
	RateLimitedGatewayFilterFactory rateLimitedGatewayFilterFactory(RateLimitPolicies policies,
			GatewayRoutePolicies routes) {
		return new RateLimitedGatewayFilterFactory(policies, routes);
	}

	@Bean
	FormBodyCache rateLimitFormBodyCache(ServerCodecConfigurer codecs) {
		FormHttpMessageReader reader = codecs.getReaders().stream()
			.filter(FormHttpMessageReader.class::isInstance)
			.map(FormHttpMessageReader.class::cast)
			.findFirst()
			.orElseGet(FormHttpMessageReader::new);
		return new FormBodyCache(reader);
	}

}
