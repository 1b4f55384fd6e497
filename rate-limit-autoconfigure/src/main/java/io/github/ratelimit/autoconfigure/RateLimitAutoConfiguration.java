package io.github.ratelimit.autoconfigure;

import java.util.List;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.web.servlet.DispatcherServlet;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerAdapter;

import io.github.ratelimit.core.RateLimitClock;
import io.github.ratelimit.core.RateLimitStore;
import io.github.ratelimit.web.ProblemDetailRejectionHandler;
import io.github.ratelimit.web.RateLimitRejectionHandler;
import io.github.ratelimit.web.RequestDelay;
import io.github.ratelimit.web.servlet.RateLimitServletConfiguration;

/**
 * Rate limiting for Spring MVC applications: registers the rate limit filter and interceptor with the
 * policies and rules of {@code rate-limit.*} and the {@code @RateLimited} handlers. What an application
 * may replace backs off when it declares its own: the {@link RateLimitStore}, the {@link RateLimitClock},
 * the {@link RateLimitRejectionHandler}, the {@link RequestDelay} and the
 * {@link io.github.ratelimit.web.DecisionRecorder}; the pipeline itself is internal
 * ({@link RateLimitServletConfiguration} builds it). {@code rate-limit.enabled=false} turns all of it off.
 */
@AutoConfiguration(afterName = { "org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration",
		"org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
		"org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration" })
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass(DispatcherServlet.class)
@ConditionalOnBooleanProperty(name = "rate-limit.enabled", matchIfMissing = true)
@EnableConfigurationProperties(RateLimitProperties.class)
@Import({ RateLimitCommonConfiguration.class, RateLimitServletConfiguration.class })
public final class RateLimitAutoConfiguration {

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
		return RequestDelay.TIMER;
	}

}
