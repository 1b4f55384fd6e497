package io.github.ratelimit.autoconfigure;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.ConfigurableEnvironment;

/**
 * Fails the start-up on a name under {@code rate-limit.} that no rate limit property has (see
 * {@link UnknownPropertiesCheck}). Applies to every application, whatever {@code rate-limit.enabled}
 * says, since a misspelt {@code rate-limit.enabled} is a typo too.
 */
@AutoConfiguration
public final class RateLimitUnknownPropertiesAutoConfiguration {

	@Bean
	static UnknownPropertiesCheck rateLimitUnknownPropertiesCheck(ConfigurableEnvironment environment) {
		return new UnknownPropertiesCheck(environment,
				UnknownPropertiesCheck.roots(RateLimitUnknownPropertiesAutoConfiguration.class.getClassLoader()));
	}

}
