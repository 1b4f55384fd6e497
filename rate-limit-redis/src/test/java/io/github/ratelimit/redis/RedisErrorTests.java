package io.github.ratelimit.redis;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisConnectionException;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.exceptions.JedisDataException;

import org.springframework.data.redis.RedisSystemException;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which failures count as an outage for the breaker and which fail one call only, from the exceptions
 * Lettuce and Jedis throw (as Spring Data Redis wraps them or not); and the once-a-minute log.
 */
class RedisErrorTests {

	@Test
	void errorsRedisAnswersForOneCallAreNotOutages() {
		assertKind(new ExecutionException(new RedisCommandExecutionException(
				"OOM command not allowed when used memory > 'maxmemory'.")), RedisError.Kind.ANSWERED, "OOM");
		assertKind(new RedisSystemException("x", new JedisDataException("ERR Error running script")),
				RedisError.Kind.ANSWERED, "ERR");
		assertKind(new RedisCommandExecutionException("NOPERM this user has no permissions"), RedisError.Kind.ANSWERED,
				"NOPERM");
		assertKind(new RedisCommandExecutionException("WRONGTYPE Operation against a key"), RedisError.Kind.ANSWERED,
				"WRONGTYPE");
		assertThat(RedisError.of(new RedisCommandExecutionException("NOPERM no")).isCredentials()).isTrue();
	}

	@Test
	void errorsOfAServerThatServesNoCallAreOutages() {
		for (String code : RedisError.OUTAGE_CODES) {
			assertKind(new ExecutionException(new RedisCommandExecutionException(code + " something")),
					RedisError.Kind.OUTAGE, code);
		}
		assertKind(new RedisConnectionException("Unable to connect to 127.0.0.1:6379",
				new RedisCommandExecutionException("WRONGPASS invalid username-password pair")), RedisError.Kind.CREDENTIALS,
				"WRONGPASS");
		assertKind(new RedisCommandExecutionException("NOAUTH HELLO must be called"), RedisError.Kind.CREDENTIALS, "NOAUTH");
	}

	@Test
	void noAnswerIsAnOutage() {
		assertKind(new TimeoutException(), RedisError.Kind.UNREACHABLE, "TIMEOUT");
		assertKind(new RedisConnectionException("Unable to connect", new java.net.ConnectException("Connection refused")),
				RedisError.Kind.UNREACHABLE, "UNREACHABLE");
		// An upper-case word in a message of a class that is not a Redis answer is no error code.
		assertKind(new IllegalStateException("OOPS no"), RedisError.Kind.UNREACHABLE, "UNREACHABLE");
	}

	@Test
	void eachKindIsLoggedAtMostOncePerInterval() {
		long[] now = { 0 };
		ThrottledLog log = new ThrottledLog(60, () -> now[0]);
		assertThat(log.tryLog("OOM")).isZero();
		assertThat(log.tryLog("OOM")).isEqualTo(-1);
		assertThat(log.tryLog("ERR")).isZero();
		now[0] = 59;
		assertThat(log.tryLog("OOM")).isEqualTo(-1);
		now[0] = 60;
		assertThat(log.tryLog("OOM")).as("two held back").isEqualTo(2);
		for (int i = 0; i < 1000; i++) {
			log.tryLog("CODE" + i);
		}
		assertThat(log.tryLog("CODE999")).as("past the bound, new kinds share one entry").isEqualTo(-1);
	}

	private static void assertKind(Throwable ex, RedisError.Kind kind, String code) {
		RedisError error = RedisError.of(ex);
		assertThat(error.kind()).as(ex.toString()).isEqualTo(kind);
		assertThat(error.code()).isEqualTo(code);
	}
}
