package io.github.ratelimit.redis.autoconfigure;

import java.io.InputStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.json.JsonParserFactory;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.util.StreamUtils;

import io.github.ratelimit.autoconfigure.RateLimitUnknownPropertiesAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Redis module ships its own configuration metadata (on every JDK), every property in it has a
 * description, and its properties are known to the check that fails the start-up on unknown ones.
 */
class RedisConfigurationMetadataTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitUnknownPropertiesAutoConfiguration.class));

	@Test
	@SuppressWarnings("unchecked")
	void theMetadataIsBuiltAndEveryPropertyHasADescription() throws Exception {
		URL classes = RedisRateLimitProperties.class.getProtectionDomain().getCodeSource().getLocation();
		URL base = new URL(classes.toString().endsWith(".jar") ? "jar:" + classes + "!/" : classes.toString());
		Map<String, Object> metadata;
		try (InputStream in = new URL(base, "META-INF/spring-configuration-metadata.json").openStream()) {
			metadata = JsonParserFactory.getJsonParser().parseMap(StreamUtils.copyToString(in, StandardCharsets.UTF_8));
		}
		List<Map<String, Object>> properties = (List<Map<String, Object>>) metadata.get("properties");
		assertThat(properties).extracting((p) -> p.get("name"))
			.contains("rate-limit.store.redis.timeout", "rate-limit.store.redis.on-failure");
		for (Map<String, Object> property : properties) {
			assertThat((String) property.get("description")).as("description of %s", property.get("name")).isNotBlank();
		}
	}

	@Test
	void redisPropertiesAreKnownNames() {
		this.runner.withPropertyValues("rate-limit.store.redis.timeout=50ms", "rate-limit.store.redis.on-failure=deny",
				"rate-limit.store.redis.breaker.probe-interval=1s")
			.run((context) -> assertThat(context).hasNotFailed());
		this.runner.withPropertyValues("rate-limit.store.redis.breaker.probe-intervall=1s")
			.run((context) -> assertThat(context).getFailure()
				.hasMessageContaining("rate-limit.store.redis.breaker.probe-intervall: no such property")
				.hasMessageContaining("Did you mean rate-limit.store.redis.breaker.probe-interval?"));
	}

}
