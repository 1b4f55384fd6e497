package io.github.ratelimit.redis.it;

import java.util.List;

import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.context.ConfigurableApplicationContext;

import io.github.ratelimit.redis.TestRedis;
import io.github.ratelimit.testsupport.Http;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two instances on one Redis that goes away: the login lockout ({@code on-failure: local}) still locks at
 * its limit on each instance, while API requests ({@code on-failure: allow}, the store's) pass; both
 * counted per policy in {@code ratelimit.decisions}.
 */
class PolicyOnFailureEndToEndTests {

	@Test
	void withRedisStoppedTheLockoutLocksPerInstanceWhileTheApiFailsOpen() {
		TestRedis redis = TestRedis.start();
		String[] properties = { "spring.data.redis.port=" + redis.port(), "rate-limit.store.redis.timeout=200ms",
				"rate-limit.store.redis.on-failure=allow", "rate-limit.policies.login.limit=3",
				"rate-limit.policies.login.period=1h", "rate-limit.policies.login.key=param:user",
				"rate-limit.policies.login.count=failures", "rate-limit.policies.login.on-failure=local",
				"rate-limit.rules[4].path=/guess", "rate-limit.rules[4].policies=login" };
		try (ConfigurableApplicationContext first = RedisTestApplication.start(properties);
				ConfigurableApplicationContext second = RedisTestApplication.start(properties)) {
			List<ConfigurableApplicationContext> instances = List.of(first, second);
			for (ConfigurableApplicationContext instance : instances) {
				assertThat(http(instance).get("/limited").statusCode()).isEqualTo(200);
			}
			redis.close();
			for (ConfigurableApplicationContext instance : instances) {
				Http http = http(instance);
				MeterRegistry meters = instance.getBean(MeterRegistry.class);
				// A first request a loaded machine made late was decided by on-failure too: counted from here.
				double failedOpen = count(meters, "api", "failed-open");
				for (int i = 0; i < 3; i++) {
					assertThat(http.post("/guess", "user=alice&ok=false").statusCode()).isEqualTo(401);
				}
				assertThat(http.post("/guess", "user=alice&ok=true").statusCode()).as("locked out locally").isEqualTo(429);
				for (int i = 0; i < 15; i++) {
					// The API's budget is 10 an hour: past it only because it fails open.
					assertThat(http.get("/limited").statusCode()).isEqualTo(200);
				}
				assertThat(count(meters, "login", "local-allowed")).isEqualTo(3);
				assertThat(count(meters, "login", "local-rejected")).isEqualTo(1);
				assertThat(count(meters, "api", "failed-open") - failedOpen).isEqualTo(15);
			}
		}
		finally {
			redis.close();
		}
	}

	private static double count(MeterRegistry meters, String policy, String outcome) {
		var counter = meters.find("ratelimit.decisions").tag("policy", policy).tag("outcome", outcome).counter();
		return (counter != null) ? counter.count() : 0;
	}

	private static Http http(ConfigurableApplicationContext instance) {
		return new Http(RedisTestApplication.port(instance));
	}

}
