package io.github.ratelimit.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.restclient.RestClientCustomizer;
import org.springframework.boot.restclient.RestTemplateCustomizer;
import org.springframework.boot.webclient.WebClientCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.http.HttpMethod;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.util.StringUtils;

import io.github.ratelimit.client.RetryAfterExchangeFilter;
import io.github.ratelimit.client.RetryAfterInterceptor;
import io.github.ratelimit.client.Sleeper;
import io.github.ratelimit.core.RateLimitConfigurationException;

/**
 * The client side: with {@code rate-limit.client.retry.enabled=true}, a {@link RetryAfterInterceptor}
 * configured by {@code rate-limit.client.retry.*} is installed, first, in every {@code RestClient}
 * and {@code RestTemplate} built from Spring Boot's {@code RestClient.Builder} and
 * {@code RestTemplateBuilder}, and the same rule as a {@link RetryAfterExchangeFilter} in every
 * {@code WebClient} built from its {@code WebClient.Builder}.
 * <p>
 * Independent of the server side: it needs no servlet container and applies whatever
 * {@code rate-limit.enabled} says. A {@link Sleeper} bean, when there is one, replaces
 * {@link Sleeper#SYSTEM}; a {@link RetryAfterInterceptor} bean replaces the configured one.
 */
@AutoConfiguration
@ConditionalOnClass(ClientHttpRequestInterceptor.class)
@ConditionalOnBooleanProperty("rate-limit.client.retry.enabled")
@EnableConfigurationProperties(RateLimitClientProperties.class)
public final class RateLimitClientAutoConfiguration {

	private static final String PREFIX = "rate-limit.client.retry";

	private static final Log logger = LogFactory.getLog(RateLimitClientAutoConfiguration.class);

	/** The retry's durations, as uniform names. */
	private static final Set<String> DURATIONS = Set.of("basedelay", "maxdelay", "maxtotalwait");

	@Bean
	@ConditionalOnMissingBean
	RetryAfterInterceptor rateLimitRetryAfterInterceptor(RateLimitClientProperties properties,
			ObjectProvider<Sleeper> sleeper, Environment environment) {
		RateLimitClientProperties.Retry retry = properties.getRetry();
		checkUnits(environment);
		if (retry.getMaxAttempts() < 1) {
			throw new RateLimitConfigurationException(PREFIX + ".max-attempts",
					"max-attempts must be at least 1, was " + retry.getMaxAttempts(),
					"Set the most tries in all, the first one included, e.g. 3; 1 retries nothing");
		}
		return RetryAfterInterceptor.builder()
			.maxAttempts(retry.getMaxAttempts())
			.baseDelay(notNegative(retry.getBaseDelay(), "base-delay"))
			.maxDelay(notNegative(retry.getMaxDelay(), "max-delay"))
			.maxTotalWait(notNegative(retry.getMaxTotalWait(), "max-total-wait"))
			.methods(methods(retry.getMethods()))
			.sleeper(sleeper.getIfAvailable(() -> Sleeper.SYSTEM))
			.build();
	}

	/**
	 * Refuses a duration written as a bare number, which Spring Boot reads as milliseconds: a
	 * {@code max-total-wait: 5} meant as seconds would give up on every Retry-After (as the server side
	 * refuses a period without a unit). Zero is the same in any unit.
	 */
	private static void checkUnits(Environment environment) {
		Map<String, Object> retry = Binder.get(environment)
			.bind(PREFIX, Bindable.mapOf(String.class, Object.class))
			.orElseGet(Map::of);
		retry.forEach((name, value) -> {
			String text = String.valueOf(value).trim();
			boolean duration = DURATIONS.contains(name.replace("-", "").toLowerCase(Locale.ROOT));
			if (duration && (value instanceof String || value instanceof Number) && text.matches("\\+?\\d+")
					&& !text.matches("\\+?0+")) {
				throw new RateLimitConfigurationException(PREFIX + "." + name,
						"the duration '" + text + "' has no unit, which Spring Boot reads as milliseconds",
						"Write it with its unit, e.g. " + text + "s, or " + text + "ms if milliseconds are meant");
			}
		});
	}

	private static Duration notNegative(Duration duration, String property) {
		if (duration == null || duration.isNegative()) {
			throw new RateLimitConfigurationException(PREFIX + "." + property,
					property + " must be zero or positive, was " + duration, "Set a duration such as 500ms or 2s");
		}
		return duration;
	}

	private static Set<HttpMethod> methods(List<String> names) {
		Set<HttpMethod> methods = new LinkedHashSet<>();
		for (int i = 0; i < names.size(); i++) {
			String name = names.get(i);
			if (!StringUtils.hasText(name) || name.trim().chars().anyMatch(Character::isWhitespace)) {
				throw new RateLimitConfigurationException(PREFIX + ".methods[" + i + "]",
						"'" + name + "' is not an HTTP method", "Name a method such as GET or PUT");
			}
			HttpMethod method = HttpMethod.valueOf(name.trim().toUpperCase(Locale.ROOT));
			if (!Arrays.asList(HttpMethod.values()).contains(method)) {
				logger.warn(PREFIX + ".methods[" + i + "] is '" + name.trim() + "', not a standard HTTP method: only requests "
						+ "of that very method are retried (a misspelt GET retries nothing)");
			}
			methods.add(method);
		}
		return methods;
	}

	// First, so that the other interceptors and filters (authentication, signing, logging) run again on each retry.
	private static <T> void installFirst(List<T> chain, T retry) {
		if (!chain.contains(retry)) {
			chain.add(0, retry);
		}
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(RestClientCustomizer.class)
	static class CustomizerConfiguration {

		@Bean
		@ConditionalOnMissingBean(name = "rateLimitRetryRestClientCustomizer")
		RestClientCustomizer rateLimitRetryRestClientCustomizer(RetryAfterInterceptor interceptor) {
			return (builder) -> builder.requestInterceptors((interceptors) -> installFirst(interceptors, interceptor));
		}

		@Bean
		@ConditionalOnMissingBean(name = "rateLimitRetryRestTemplateCustomizer")
		RestTemplateCustomizer rateLimitRetryRestTemplateCustomizer(RetryAfterInterceptor interceptor) {
			return (restTemplate) -> {
				List<ClientHttpRequestInterceptor> interceptors = new ArrayList<>(restTemplate.getInterceptors());
				installFirst(interceptors, interceptor);
				restTemplate.setInterceptors(interceptors);
			};
		}

	}

	/** {@code WebClient}: the same rule as a filter, first in every client built from Spring Boot's builder. */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(name = { "org.springframework.web.reactive.function.client.WebClient",
			"org.springframework.boot.webclient.WebClientCustomizer" })
	static class WebClientConfiguration {

		@Bean
		@ConditionalOnMissingBean
		RetryAfterExchangeFilter rateLimitRetryAfterExchangeFilter(RetryAfterInterceptor rule) {
			return new RetryAfterExchangeFilter(rule);
		}

		@Bean
		@ConditionalOnMissingBean(name = "rateLimitRetryWebClientCustomizer")
		WebClientCustomizer rateLimitRetryWebClientCustomizer(RetryAfterExchangeFilter filter) {
			return (builder) -> builder.filters((filters) -> installFirst(filters, filter));
		}

	}

}
