package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.Decision;
import io.github.ratelimit.core.Limit;
import io.github.ratelimit.core.OnFailure;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Errors Redis answers are not outages: at a real {@code maxmemory} with {@code noeviction}, every
 * write is answered OOM; each such call is decided by on-failure, the breaker (meant for an
 * unreachable Redis) stays closed, and one line a minute is logged, not one per request or per flip.
 */
@ExtendWith(OutputCaptureExtension.class)
class RedisAnsweredErrorTests {

	@RegisterExtension
	static final RedisExtension redis = new RedisExtension();

	private static final Limit LIMIT = Limit.builder().limit(2).period(Duration.ofMinutes(1)).build();

	private final List<RedisRateLimitStore> stores = new ArrayList<>();

	@BeforeEach
	void fillMemory() {
		redis.commands().flushall();
		redis.commands().configSet("maxmemory-policy", "noeviction");
		redis.commands().set("ballast", "x".repeat(8 * 1024 * 1024));
		redis.commands().configSet("maxmemory", "1mb");
	}

	@AfterEach
	void freeMemory() {
		this.stores.forEach(RedisRateLimitStore::close);
		redis.commands().configSet("maxmemory", "0");
		redis.commands().flushall();
	}

	private RedisRateLimitStore store(OnFailure onFailure) {
		// A timeout long enough that every error is Redis' answer, never a late call on a loaded machine.
		RedisRateLimitStore store = RedisRateLimitStore.builder(redis.connectionFactory())
			.timeout(Duration.ofSeconds(1))
			.onFailure(onFailure)
			.breaker(3, Duration.ofMillis(200))
			.build();
		this.stores.add(store);
		return store;
	}

	@Test
	void outOfMemoryIsDecidedByOnFailureWithoutOpeningTheBreaker(CapturedOutput output) {
		RedisRateLimitStore store = store(OnFailure.DENY);
		for (int i = 0; i < 50; i++) {
			Decision decision = store.tryAcquire(new Acquisition("api", LIMIT, "k" + i, 1));
			assertThat(decision.isAllowed()).as("decided by on-failure=deny").isFalse();
			assertThat(store.isAvailable()).as("the breaker stays closed").isTrue();
		}
		assertThat(store.errors()).isEqualTo(50);
		assertThat(store.fallbacks()).isEqualTo(50);
		assertThat(output).containsOnlyOnce("answered a rate limit call with an error (OOM")
			.contains("on-failure=deny")
			.doesNotContain("Redis rate limit store failed")
			.doesNotContain("answers again on");

		// Memory back: Redis decides again, exactly.
		redis.commands().configSet("maxmemory", "0");
		Acquisition acquisition = new Acquisition("api", LIMIT, "after", 1);
		assertThat(store.tryAcquire(acquisition).remaining()).isEqualTo(1);
		assertThat(store.tryAcquire(acquisition).remaining()).isZero();
		assertThat(store.tryAcquire(acquisition).isAllowed()).isFalse();
		assertThat(store.errors()).isEqualTo(50);
	}

	@Test
	void readsStillDecideAtMaxMemory() {
		RedisRateLimitStore store = store(OnFailure.ALLOW);
		Acquisition acquisition = new Acquisition("api", LIMIT, "k", 1);
		// A rejection writes nothing: a key spent before the memory filled up stays rejected, by Redis.
		redis.commands().configSet("maxmemory", "0");
		store.tryAcquire(acquisition);
		store.tryAcquire(acquisition);
		redis.commands().configSet("maxmemory", "1mb");
		Decision decision = store.tryAcquire(acquisition);
		assertThat(decision.isAllowed()).isFalse();
		assertThat(store.errors()).isZero();
	}
}
