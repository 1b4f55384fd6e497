package io.github.ratelimit.redis;

import java.time.Duration;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.Limit;

import io.github.ratelimit.testsupport.RedisProcess;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Credentials are checked at start-up, against a real {@code redis-server --requirepass}: a wrong
 * password, none, or a user without permission on the keys is logged as an ERROR naming
 * {@code spring.data.redis.username}/{@code password} and the node before any request; with fail-fast
 * the build fails instead, as it does for an unreachable Redis.
 */
@ExtendWith(OutputCaptureExtension.class)
class RedisCredentialsTests {

	private static final String PASSWORD = "correct-horse";

	private static final Acquisition ACQUISITION = new Acquisition("api",
			Limit.builder().limit(2).period(Duration.ofMinutes(1)).build(), "k", 1);

	private static RedisProcess redis;

	@BeforeAll
	static void start() {
		redis = RedisProcess.launch("--requirepass", PASSWORD);
		RedisClient client = RedisClient.create(RedisURI.builder().withHost("127.0.0.1").withPort(redis.port())
			.withPassword(PASSWORD.toCharArray()).build());
		try (StatefulRedisConnection<String, String> connection = client.connect()) {
			// May run scripts, but only on keys of another prefix.
			connection.sync().aclSetuser("elsewhere", io.lettuce.core.AclSetuserArgs.Builder.on()
				.addPassword(PASSWORD).keyPattern("other:*").addCommand(io.lettuce.core.protocol.CommandType.EVALSHA)
				.addCommand(io.lettuce.core.protocol.CommandType.EVAL).addCommand(io.lettuce.core.protocol.CommandType.SCRIPT)
				.addCommand(io.lettuce.core.protocol.CommandType.HELLO).addCommand(io.lettuce.core.protocol.CommandType.GET)
				.addCommand(io.lettuce.core.protocol.CommandType.SET).addCommand(io.lettuce.core.protocol.CommandType.TIME));
		}
		finally {
			client.shutdown();
		}
	}

	@AfterAll
	static void stop() {
		redis.close();
	}

	@Test
	void aWrongPasswordIsLoggedAtStartUpBeforeAnyRequest(CapturedOutput output) {
		assertErrorAtStartUp(factory(null, "wrong"), output, "WRONGPASS");
	}

	@Test
	void noPasswordIsLoggedAtStartUp(CapturedOutput output) {
		assertErrorAtStartUp(factory(null, null), output, "NOAUTH");
	}

	@Test
	void aUserWithoutPermissionOnTheKeysIsLoggedAtStartUp(CapturedOutput output) {
		assertErrorAtStartUp(factory("elsewhere", PASSWORD), output, "NOPERM");
	}

	@Test
	void theRightPasswordLogsNothingAndDecides(CapturedOutput output) {
		LettuceConnectionFactory factory = factory(null, PASSWORD);
		try (RedisRateLimitStore store = RedisRateLimitStore.builder(factory).failFast(true).build()) {
			assertThat(store.tryAcquire(ACQUISITION).remaining()).isEqualTo(1);
			assertThat(store.tryAcquire(ACQUISITION).remaining()).isEqualTo(0);
			assertThat(store.tryAcquire(ACQUISITION).isAllowed()).isFalse();
			assertThat(store.errors()).isZero();
			// The store's own lines only: the output also catches the Netty event loops of earlier tests' clients
			// as they shut down ("Failed to submit a listener notification task"), on their own schedule.
			assertThat(output.getAll()).doesNotContainPattern("ERROR[^\\n]*RedisRateLimitStore")
				.doesNotContain("did not answer");
		}
		finally {
			factory.destroy();
		}
	}

	@Test
	void failFastFailsTheBuildOnAWrongPassword() {
		LettuceConnectionFactory factory = factory(null, "wrong");
		try {
			assertThatIllegalStateException().isThrownBy(() -> RedisRateLimitStore.builder(factory).failFast(true).build())
				.withMessageContaining("127.0.0.1:" + redis.port())
				.withMessageContaining("WRONGPASS")
				.withMessageContaining("spring.data.redis.username and spring.data.redis.password");
		}
		finally {
			factory.destroy();
		}
	}

	@Test
	void failFastFailsTheBuildWhenRedisIsUnreachable(CapturedOutput output) {
		int nowhere = RedisProcess.freePort();
		LettuceConnectionFactory factory = RedisExtension.fastReconnectingFactory(nowhere);
		try {
			assertThatIllegalStateException().isThrownBy(() -> RedisRateLimitStore.builder(factory).failFast(true).build())
				.withMessageContaining("127.0.0.1:" + nowhere)
				.withMessageContaining("did not answer");
			// Without fail-fast: a WARN, and the store decides by on-failure.
			try (RedisRateLimitStore store = RedisRateLimitStore.builder(factory).build()) {
				assertThat(output).contains("WARN").contains("did not answer the rate limiter at start-up");
				assertThat(store.tryAcquire(ACQUISITION).isAllowed()).isTrue();
			}
		}
		finally {
			factory.destroy();
		}
	}

	private static void assertErrorAtStartUp(LettuceConnectionFactory factory, CapturedOutput output, String code) {
		try (RedisRateLimitStore store = RedisRateLimitStore.builder(factory).build()) {
			// No request yet: the build waited for the start-up check.
			assertThat(store.errors()).isZero();
			assertThat(output).contains("ERROR")
				.contains("Redis at 127.0.0.1:" + redis.port() + " refused the rate limiter's credentials or permissions at start-up")
				.contains(code)
				.contains("spring.data.redis.username and spring.data.redis.password");
		}
		finally {
			factory.destroy();
		}
	}

	private static LettuceConnectionFactory factory(String username, String password) {
		RedisStandaloneConfiguration configuration = new RedisStandaloneConfiguration("127.0.0.1", redis.port());
		configuration.setUsername(username);
		if (password != null) {
			configuration.setPassword(password);
		}
		LettuceConnectionFactory factory = new LettuceConnectionFactory(configuration);
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}
}
