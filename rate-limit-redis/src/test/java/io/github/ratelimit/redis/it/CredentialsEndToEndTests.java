package io.github.ratelimit.redis.it;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;

import io.github.ratelimit.core.RateLimitConfigurationException;
import io.github.ratelimit.redis.TestRedis;
import io.github.ratelimit.testsupport.Http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A whole application against a real Redis that requires a password: a wrong one is an ERROR naming
 * {@code spring.data.redis.password} once the application has started, before any request; with
 * {@code rate-limit.store.redis.fail-fast=true} the start-up fails, naming the property.
 */
@ExtendWith(OutputCaptureExtension.class)
class CredentialsEndToEndTests {

	private static TestRedis redis;

	@BeforeAll
	static void startRedis() {
		redis = TestRedis.start("--requirepass", "correct-horse");
	}

	@AfterAll
	static void stopRedis() {
		redis.close();
	}

	@Test
	void aWrongPasswordIsAnErrorBeforeAnyRequest(CapturedOutput output) {
		try (ConfigurableApplicationContext app = RedisTestApplication.start("spring.data.redis.port=" + redis.port(),
				"spring.data.redis.password=wrong")) {
			assertThat(output).contains("ERROR")
				.contains("Redis at localhost:" + redis.port() + " refused the rate limiter's credentials")
				.contains("WRONGPASS")
				.contains("spring.data.redis.password");
			// fail-fast is off: the application serves, on-failure (allow) deciding.
			assertThat(new Http(RedisTestApplication.port(app)).get("/limited").statusCode()).isEqualTo(200);
		}
	}

	@Test
	void failFastStopsTheStartUp() {
		assertThatThrownBy(() -> RedisTestApplication.start("spring.data.redis.port=" + redis.port(),
				"spring.data.redis.password=wrong", "rate-limit.store.redis.fail-fast=true"))
			.rootCause()
			.isInstanceOf(RateLimitConfigurationException.class)
			.hasMessageContaining("rate-limit.store.redis.fail-fast")
			.hasMessageContaining("WRONGPASS")
			.hasMessageContaining("spring.data.redis.password");
	}

	@Test
	void theRightPasswordStartsWithFailFast(CapturedOutput output) {
		try (ConfigurableApplicationContext app = RedisTestApplication.start("spring.data.redis.port=" + redis.port(),
				"spring.data.redis.password=correct-horse", "rate-limit.store.redis.fail-fast=true")) {
			assertThat(new Http(RedisTestApplication.port(app)).get("/limited").statusCode()).isEqualTo(200);
			assertThat(output).doesNotContain("refused the rate limiter");
		}
	}
}
