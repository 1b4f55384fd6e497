package io.github.ratelimit.redis.it;

import java.net.http.HttpResponse;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.context.ConfigurableApplicationContext;

import io.github.ratelimit.redis.TestRedis;
import io.github.ratelimit.testsupport.Http;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Plans and exemptions on the Redis store, through two running instances that share one Redis: a
 * key keeps one budget whatever plan it names and whichever instance it reaches, and an exempt
 * request spends nothing anywhere.
 */
class PlansOnRedisTests {

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
		redis.flushAll();
	}

	private static ConfigurableApplicationContext start() {
		return RedisTestApplication.start("spring.data.redis.port=" + redis.port(), "rate-limit.store.redis.timeout=5s",
				"rate-limit.policies.tiered.limit=2", "rate-limit.policies.tiered.period=1h",
				"rate-limit.policies.tiered.key=header:X-Api-Key", "rate-limit.policies.tiered.plan=header:X-Plan",
				"rate-limit.policies.tiered.plans.pro.limit=4", "rate-limit.rules[0].policies=tiered",
				"rate-limit.exempt.when=header('X-Internal') == 'yes'");
	}

	@Test
	void aClientSwitchingPlansAcrossInstancesKeepsOneBudget() {
		try (ConfigurableApplicationContext one = start(); ConfigurableApplicationContext two = start()) {
			Http first = new Http(RedisTestApplication.port(one));
			Http second = new Http(RedisTestApplication.port(two));
			// The free plan's 2, spent on the first instance.
			assertThat(first.get("/limited", "X-Api-Key", "mallory").statusCode()).isEqualTo(200);
			assertThat(first.get("/limited", "X-Api-Key", "mallory").statusCode()).isEqualTo(200);
			assertThat(second.get("/limited", "X-Api-Key", "mallory").statusCode()).isEqualTo(429);
			// Naming the pro plan on the other instance: judged by 4 with the 2 already spent, so exactly 2 more.
			HttpResponse<String> pro = second.get("/limited", "X-Api-Key", "mallory", "X-Plan", "pro");
			assertThat(pro.statusCode()).isEqualTo(200);
			assertThat(pro.headers().firstValue("RateLimit-Policy")).hasValue("\"tiered\";q=4;w=3600");
			assertThat(pro.headers().firstValue("RateLimit").orElseThrow()).startsWith("\"tiered\";r=1;");
			assertThat(first.get("/limited", "X-Api-Key", "mallory", "X-Plan", "pro").statusCode()).isEqualTo(200);
			assertThat(second.get("/limited", "X-Api-Key", "mallory", "X-Plan", "pro").statusCode()).isEqualTo(429);
			// An unknown plan, or none, is the policy's own limit: still nothing left.
			assertThat(first.get("/limited", "X-Api-Key", "mallory", "X-Plan", "platinum").statusCode()).isEqualTo(429);
			assertThat(second.get("/limited", "X-Api-Key", "mallory").statusCode()).isEqualTo(429);
			// Another key has its own budget.
			assertThat(second.get("/limited", "X-Api-Key", "alice").statusCode()).isEqualTo(200);
		}
	}

	@Test
	void anExemptRequestSpendsNothingOnAnyInstance() {
		try (ConfigurableApplicationContext one = start(); ConfigurableApplicationContext two = start()) {
			Http first = new Http(RedisTestApplication.port(one));
			Http second = new Http(RedisTestApplication.port(two));
			for (int i = 0; i < 5; i++) {
				HttpResponse<String> exempt = ((i % 2 == 0) ? first : second).get("/limited", "X-Api-Key", "monitor",
						"X-Internal", "yes");
				assertThat(exempt.statusCode()).isEqualTo(200);
				assertThat(exempt.headers().firstValue("RateLimit-Policy")).isEmpty();
				assertThat(exempt.headers().firstValue("X-RateLimit-Remaining")).isEmpty();
			}
			// The same key, not exempt: its whole budget is left.
			assertThat(first.get("/limited", "X-Api-Key", "monitor").statusCode()).isEqualTo(200);
			assertThat(second.get("/limited", "X-Api-Key", "monitor").statusCode()).isEqualTo(200);
			assertThat(first.get("/limited", "X-Api-Key", "monitor").statusCode()).isEqualTo(429);
		}
	}

}
