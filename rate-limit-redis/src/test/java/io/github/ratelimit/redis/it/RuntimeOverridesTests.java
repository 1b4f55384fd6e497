package io.github.ratelimit.redis.it;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import io.github.ratelimit.redis.TestRedis;

/**
 * Runtime changes of policies through two instances on one real standalone Redis: see
 * {@link SharedOverrides}.
 */
@ExtendWith(OutputCaptureExtension.class)
class RuntimeOverridesTests {

	private static TestRedis redis;

	@BeforeAll
	static void startRedis() {
		redis = TestRedis.start();
	}

	@AfterAll
	static void stopRedis() {
		redis.close();
	}

	@BeforeEach
	void flush() {
		if (!redis.isRunning()) {
			redis.restart();
		}
		redis.flushAll();
	}

	@Test
	void aChangeOnOneInstanceReachesTheOtherAndOutlivesARestart(CapturedOutput output) {
		SharedOverrides.aChangeOnOneInstanceReachesTheOther(output, "spring.data.redis.port=" + redis.port());
	}

	@Test
	void aRestoreOnAnInstanceThatHasNotSeenTheChangeRestoresEveryInstance() {
		SharedOverrides.aRestoreOnAnInstanceThatHasNotSeenTheChangeRestoresEveryInstance(
				"spring.data.redis.port=" + redis.port());
	}

	@Test
	void aResetOnOneInstanceDropsTheRejectionKeptByTheOther() {
		SharedOverrides.aResetOnOneInstanceDropsTheRejectionKeptByTheOther("spring.data.redis.port=" + redis.port());
	}

	@Test
	void withRedisDownTheOverrideStaysAndRequestsAreDecided(CapturedOutput output) {
		SharedOverrides.withRedisDownTheOverrideStays(output, redis);
	}
}
