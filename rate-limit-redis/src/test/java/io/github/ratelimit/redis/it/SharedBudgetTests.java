package io.github.ratelimit.redis.it;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;

import org.springframework.context.ConfigurableApplicationContext;

import io.github.ratelimit.redis.RedisRateLimitStore;
import io.github.ratelimit.testsupport.Http;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two application instances on one Redis (standalone or cluster) enforce one budget through HTTP.
 */
final class SharedBudgetTests {

	private SharedBudgetTests() {
	}

	/**
	 * Starts two instances with the given Redis settings and checks that they share the budgets.
	 * @param redisProperties {@code spring.data.redis.*} settings, as {@code name=value}
	 */
	static void twoInstancesShareOneBudget(String... redisProperties) {
		// A long timeout: a request on-failure decides (a first, slow call on a busy machine) is not counted
		// in Redis, and this test counts exactly.
		String[] properties = java.util.stream.Stream
			.concat(java.util.stream.Stream.of(redisProperties), java.util.stream.Stream.of("rate-limit.store.redis.timeout=5s"))
			.toArray(String[]::new);
		try (ConfigurableApplicationContext one = RedisTestApplication.start(properties);
				ConfigurableApplicationContext two = RedisTestApplication.start(properties)) {
			int[] ports = { RedisTestApplication.port(one), RedisTestApplication.port(two) };
			List<Integer> statuses = new ArrayList<>();
			for (int i = 0; i < 30; i++) {
				statuses.add(new Http(ports[i % 2]).get("/limited").statusCode());
			}
			// /limited allows 10 per hour, globally: 10 requests pass in all, alternating instances.
			assertThat(statuses.subList(0, 10)).containsOnly(200);
			assertThat(statuses.subList(10, 30)).containsOnly(429);
			HttpResponse<String> rejected = new Http(ports[0]).get("/limited");
			assertThat(rejected.headers().firstValue("X-RateLimit-Remaining")).hasValue("0");
			assertThat(rejected.headers().firstValue("Retry-After")).isPresent();

			// /double needs api (exhausted above) and strict (3): rejected by api, it takes nothing from strict.
			for (int i = 0; i < 4; i++) {
				assertThat(new Http(ports[i % 2]).get("/double").statusCode()).isEqualTo(429);
			}
			assertThat(new Http(ports[0]).get("/free").statusCode()).isEqualTo(200);
			assertThat(one.getBean(RedisRateLimitStore.class).fallbacks()).isZero();
			assertThat(two.getBean(RedisRateLimitStore.class).fallbacks()).isZero();
		}
	}
}
