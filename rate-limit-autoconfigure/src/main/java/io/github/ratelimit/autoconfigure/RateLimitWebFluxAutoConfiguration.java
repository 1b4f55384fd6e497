package io.github.ratelimit.autoconfigure;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Import;
import org.springframework.web.reactive.DispatcherHandler;

import io.github.ratelimit.web.reactive.RateLimitReactiveConfiguration;

/**
 * Rate limiting for WebFlux applications: registers the rate limit web filter and the handler adapter that
 * decides a request once WebFlux has found its handler, with the same policies, rules, keys, stores and
 * headers as the servlet side ({@link RateLimitAutoConfiguration}). What an application may replace backs off
 * when it declares its own: the {@link io.github.ratelimit.core.RateLimitStore}, the
 * {@link io.github.ratelimit.core.RateLimitClock} and the {@link io.github.ratelimit.web.DecisionRecorder}.
 * {@code rate-limit.enabled=false} turns all of it off.
 */
@AutoConfiguration(afterName = { "org.springframework.boot.webflux.autoconfigure.WebFluxAutoConfiguration",
		"org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
		"org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration" })
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnClass(DispatcherHandler.class)
@ConditionalOnBooleanProperty(name = "rate-limit.enabled", matchIfMissing = true)
@EnableConfigurationProperties(RateLimitProperties.class)
@Import({ RateLimitCommonConfiguration.class, RateLimitReactiveConfiguration.class })
public final class RateLimitWebFluxAutoConfiguration {

}
