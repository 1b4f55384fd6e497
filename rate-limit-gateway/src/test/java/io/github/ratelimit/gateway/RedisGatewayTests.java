package io.github.ratelimit.gateway;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

import io.github.ratelimit.redis.RedisRateLimitStore;
import io.github.ratelimit.testsupport.AtOnce;
import io.github.ratelimit.testsupport.Backend;
import io.github.ratelimit.testsupport.Http;
import io.github.ratelimit.testsupport.RedisProcess;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two gateways on one real Redis share a route's budget exactly; when Redis goes away, each policy's
 * {@code on-failure} decides, and once the breaker is open no request waits out the store's timeout. Runs its
 * tests in order: the outage comes last.
 */
@org.junit.jupiter.api.TestMethodOrder(org.junit.jupiter.api.MethodOrderer.OrderAnnotation.class)
class RedisGatewayTests {

	/** Far above what an answer takes on a loaded machine, so that a request that waited for it shows. */
	private static final Duration TIMEOUT = Duration.ofSeconds(1);

	private static Backend backend;

	private static RedisProcess redis;

	private static ConfigurableApplicationContext one;

	private static ConfigurableApplicationContext two;

	@BeforeAll
	static void start() {
		backend = Backend.start();
		redis = RedisProcess.launch();
		one = gateway();
		two = gateway();
	}

	@AfterAll
	static void stop() {
		two.close();
		one.close();
		redis.close();
		backend.close();
	}

	@Test
	@org.junit.jupiter.api.Order(1)
	void twoGatewaysShareARoutesBudgetExactly() throws Exception {
		Http[] clients = { new Http(port(one)), new Http(port(two)) };
		Map<Integer, Integer> statuses = AtOnce.statuses(60, (i) -> () -> clients[i % 2].get("/api/shared").statusCode());
		assertThat(statuses).containsExactlyInAnyOrderEntriesOf(Map.of(200, 20, 429, 40));
		assertThat(backend.hits("/api/shared")).isEqualTo(20);
	}

	@Test
	@org.junit.jupiter.api.Order(2)
	void whileRedisIsDownEachPolicysOnFailureDecidesWithoutWaitingOnceTheBreakerIsOpen() throws Exception {
		Http client = new Http(port(one));
		redis.kill();
		// The breaker opens after 3 failed calls: at most those wait for the timeout.
		for (int i = 0; i < 3; i++) {
			client.get("/api/outage/warm", "X-Fail", "open");
		}
		RedisRateLimitStore store = one.getBean(RedisRateLimitStore.class);
		long errors = store.errors();
		assertThat(store.isAvailable()).as("the breaker is open").isFalse();
		for (int i = 0; i < 5; i++) {
			assertThat(outage(client, "open").statusCode()).as("on-failure: allow").isEqualTo(200);
			HttpResponse<String> closed = outage(client, "closed");
			assertThat(closed.statusCode()).as("on-failure: deny").isEqualTo(429);
			assertThat(closed.headers().firstValue("Retry-After")).hasValue("1");
		}
		assertThat(outage(client, "local").statusCode()).as("on-failure: local, in process").isEqualTo(200);
		assertThat(outage(client, "local").statusCode()).isEqualTo(200);
		assertThat(outage(client, "local").statusCode()).as("the local budget of 2, spent").isEqualTo(429);
		// No call went to Redis (each would have been an error): none waited for it.
		assertThat(store.errors()).as("answered without waiting for Redis").isEqualTo(errors);
	}

	/** A request on the outage route, decided while the breaker is open. */
	private static HttpResponse<String> outage(Http client, String failure) {
		return client.get("/api/outage/" + failure, "X-Fail", failure);
	}

	private static ConfigurableApplicationContext gateway() {
		return new SpringApplicationBuilder(GatewayApplication.class).web(WebApplicationType.REACTIVE)
			.properties("server.port=0", "spring.main.banner-mode=off", "backend.uri=" + backend.uri(),
					"spring.data.redis.port=" + redis.port(), "rate-limit.store.type=redis",
					"rate-limit.store.redis.warm-up=200ms",
					"rate-limit.store.redis.timeout=" + TIMEOUT.toMillis() + "ms",
					"rate-limit.store.redis.breaker.failure-threshold=3",
					"rate-limit.store.redis.breaker.probe-interval=1h")
			.run();
	}

	private static int port(ConfigurableApplicationContext context) {
		return ((WebServerApplicationContext) context).getWebServer().getPort();
	}

}
