package io.github.ratelimit.gateway;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.cloud.gateway.filter.ratelimit.RateLimiter;
import org.springframework.cloud.gateway.support.ConfigurationService;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Fallback;

import io.github.ratelimit.autoconfigure.RateLimitProperties;
import io.github.ratelimit.core.RateLimitStore;
import io.github.ratelimit.web.DecisionRecorder;
import io.github.ratelimit.web.limiter.RateLimitHeaders;
import io.github.ratelimit.web.limiter.RequestLimiter;
import io.github.ratelimit.web.policy.RateLimitPolicies;
import io.github.ratelimit.web.reactive.StoreCalls;

/**
 * The {@code RateLimiter} that Spring Cloud Gateway's {@code RequestRateLimiter} filter accepts,
 * {@code rate-limiter: "#{@rateLimitedRateLimiter}"} ({@link PolicyRateLimiter}). Ahead of the gateway's own
 * configuration, which makes that filter only when a {@code RateLimiter} bean exists.
 */
@AutoConfiguration(beforeName = "org.springframework.cloud.gateway.config.GatewayAutoConfiguration")
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnClass(RateLimiter.class)
public final class RateLimitGatewayRateLimiterAutoConfiguration {

	/**
	 * A fallback: the gateway's own {@code RateLimiter} ({@code RedisRateLimiter}, with Redis on the class path)
	 * stays the one a {@code RequestRateLimiter} filter without {@code rate-limiter} gets.
	 */
	@Bean
	@Fallback
	PolicyRateLimiter rateLimitedRateLimiter(ObjectProvider<RateLimitPolicies> policies,
			ObjectProvider<RateLimitStore> store, ObjectProvider<RateLimitHeaders> headers,
			ObjectProvider<DecisionRecorder> recorder, ObjectProvider<RequestLimiter> limiter,
			ObjectProvider<RateLimitProperties> properties,
			ObjectProvider<ConfigurationService> configurationService) {
		RateLimitPolicies found = policies.getIfAvailable();
		if (found == null) {
			// rate-limit.enabled=false: every request is allowed.
			return new PolicyRateLimiter(null, configurationService.getIfAvailable());
		}
		RateLimitStore rateLimitStore = store.getObject();
		return new PolicyRateLimiter(new PolicyRateLimiter.Limiting(found, rateLimitStore, headers.getObject(),
				recorder.getIfAvailable(() -> DecisionRecorder.NONE), limiter.getObject(),
				properties.getObject().getMode() == RateLimitProperties.Mode.SHADOW, StoreCalls.of(rateLimitStore)),
				configurationService.getIfAvailable());
	}

}
