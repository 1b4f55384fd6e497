package io.github.ratelimit.autoconfigure;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;

/**
 * Says, once at start-up, that a reactive (WebFlux) application is not rate limited: the starter's
 * filter is a servlet filter, so it limits Spring MVC applications only, and without this warning a
 * WebFlux application with {@code @RateLimited} endpoints would simply never be limited.
 * {@code rate-limit.enabled=false} turns the warning off.
 */
@AutoConfiguration
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnBooleanProperty(name = "rate-limit.enabled", matchIfMissing = true)
public final class RateLimitWebFluxAutoConfiguration {

	@Bean
	static InactiveOnWebFluxWarning rateLimitInactiveOnWebFluxWarning() {
		return new InactiveOnWebFluxWarning();
	}

	/**
	 * Logs the warning once the application's beans exist.
	 */
	static final class InactiveOnWebFluxWarning implements SmartInitializingSingleton {

		private static final Log logger = LogFactory.getLog(RateLimitWebFluxAutoConfiguration.class);

		static final String MESSAGE = "Rate limiting is inactive: this is a reactive (WebFlux) application and "
				+ "rate-limit-spring-boot-starter limits Spring MVC (servlet) applications only. No request is "
				+ "limited, and neither @RateLimited nor rate-limit.policies and rate-limit.rules are enforced or "
				+ "validated. Run the application on Spring MVC (spring-boot-starter-webmvc), or set "
				+ "rate-limit.enabled=false to turn this warning off.";

		@Override
		public void afterSingletonsInstantiated() {
			logger.warn(MESSAGE);
		}

	}

}
