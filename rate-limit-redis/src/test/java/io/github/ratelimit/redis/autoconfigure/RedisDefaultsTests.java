package io.github.ratelimit.redis.autoconfigure;

import java.lang.reflect.Field;
import java.util.LinkedHashMap;
import java.util.Map;

import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.ratelimit.redis.RedisRateLimitStore;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The defaults of {@code rate-limit.store.redis.*} are the store builder's: written out in the
 * properties class because the configuration metadata (what an IDE shows) is read from its field
 * initializers, and held equal here, one by one, so that the two never drift apart.
 */
class RedisDefaultsTests {

	@Test
	void thePropertiesDefaultsAreTheBuildersDefaults() throws Exception {
		RedisRateLimitProperties properties = new RedisRateLimitProperties();
		Map<String, Object> expected = new LinkedHashMap<>();
		expected.put("keyPrefix", properties.getKeyPrefix());
		expected.put("timeout", properties.getTimeout());
		expected.put("onFailure", properties.getOnFailure());
		expected.put("failFast", properties.isFailFast());
		expected.put("rejectionCacheMaxAge", properties.getRejectionCache());
		expected.put("coalescing", properties.isCoalescing());
		expected.put("failureThreshold", properties.getBreaker().getFailureThreshold());
		expected.put("probeInterval", properties.getBreaker().getProbeInterval());
		RedisRateLimitStore.Builder builder = RedisRateLimitStore
			.builder(new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", 1)));
		Field held = RedisRateLimitStore.Builder.class.getDeclaredField("settings");
		held.setAccessible(true);
		Object settings = held.get(builder);
		for (Map.Entry<String, Object> property : expected.entrySet()) {
			Field field = settings.getClass().getDeclaredField(property.getKey());
			field.setAccessible(true);
			assertThat(field.get(settings)).as(property.getKey()).isEqualTo(property.getValue());
		}
	}
}
