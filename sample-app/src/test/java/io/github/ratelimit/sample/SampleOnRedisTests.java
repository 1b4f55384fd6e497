package io.github.ratelimit.sample;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;

import io.github.ratelimit.redis.RedisRateLimitStore;
import io.github.ratelimit.testsupport.RedisProcess;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample with {@code --spring.profiles.active=redis} on a real Redis: two instances, as the
 * README's two commands start them, share one budget of {@code /api/hello} (5 a minute per IP), its
 * state sits in Redis, and health is up.
 */
class SampleOnRedisTests {

	private static RedisProcess redis;

	private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	@BeforeAll
	static void startRedis() {
		redis = RedisProcess.launch();
	}

	@AfterAll
	static void stopRedis() {
		redis.close();
	}

	@Test
	void twoInstancesShareOneBudgetOnRedis() throws Exception {
		// A long timeout: a request on-failure decides (a slow call on a starved machine) is not counted in
		// Redis, and this test counts exactly.
		String[] args = { "--spring.profiles.active=redis", "--server.port=0", "--spring.data.redis.port=" + redis.port(),
				"--spring.main.banner-mode=off", "--rate-limit.store.redis.timeout=5s", "--rate-limit.store.redis.warm-up=200ms",
				"--rate-limit.policies.login.slow-down.delay=1ms", "--rate-limit.policies.login.slow-down.max-delay=4ms" };
		try (ConfigurableApplicationContext one = SpringApplication.run(SampleApplication.class, args);
				ConfigurableApplicationContext two = SpringApplication.run(SampleApplication.class, args)) {
			assertThat(one.getBean(RedisRateLimitStore.class)).isNotNull();
			int[] ports = { port(one), port(two) };
			List<Integer> statuses = new ArrayList<>();
			for (int i = 0; i < 8; i++) {
				statuses.add(get(ports[i % 2], "/api/hello").statusCode());
			}
			assertThat(statuses).containsExactly(200, 200, 200, 200, 200, 429, 429, 429);
			try (RedisConnection connection = one.getBean(RedisConnectionFactory.class).getConnection()) {
				assertThat(connection.keyCommands().keys("rate-limit:*".getBytes())).map(String::new)
					.anyMatch((key) -> key.startsWith("rate-limit:{api:"));
			}
			assertThat(get(ports[1], "/api/ping").statusCode()).isEqualTo(200);
			// login counts failures on Redis too: 5 wrong passwords lock alice out on both instances.
			for (int i = 0; i < 5; i++) {
				assertThat(post(ports[i % 2], "/api/login", "username=alice&password=wrong").statusCode()).isEqualTo(401);
			}
			assertThat(post(ports[1], "/api/login", "username=alice&password=correct-horse").statusCode()).isEqualTo(429);
			HttpResponse<String> health = get(ports[0], "/actuator/health");
			assertThat(health.statusCode()).isEqualTo(200);
			assertThat(health.body()).contains("\"status\":\"UP\"");
		}
	}

	private static int port(ConfigurableApplicationContext context) {
		return Integer.parseInt(context.getEnvironment().getProperty("local.server.port"));
	}

	private HttpResponse<String> get(int port, String path) throws Exception {
		return this.client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).GET().build(),
				HttpResponse.BodyHandlers.ofString());
	}

	private HttpResponse<String> post(int port, String path, String form) throws Exception {
		return this.client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
			.header("Content-Type", "application/x-www-form-urlencoded")
			.POST(HttpRequest.BodyPublishers.ofString(form))
			.build(), HttpResponse.BodyHandlers.ofString());
	}
}
