package io.github.ratelimit.redis.reactive;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import io.github.ratelimit.redis.RedisRateLimitStore;
import io.github.ratelimit.redis.TestRedis;
import io.github.ratelimit.testsupport.AtOnce;
import io.github.ratelimit.testsupport.Http;
import io.github.ratelimit.testsupport.NonBlocking;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * WebFlux applications on a real Redis, on Netty, with BlockHound watching the event loops (Netty's and
 * Lettuce's): two instances, one on Lettuce and one on Jedis, share one budget exactly, and one concurrency
 * limit's slots. Admissions are asked on the event loop ({@code admitAllAsync}: Lettuce's own asynchronous
 * calls, the store's pool for Jedis), the store's other calls on Reactor's bounded elastic scheduler: none
 * blocks an event loop.
 */
class ReactiveOnRedisTests {

	private static TestRedis redis;

	private static ConfigurableApplicationContext one;

	private static ConfigurableApplicationContext two;

	@BeforeAll
	static void start() {
		NonBlocking.install();
		redis = TestRedis.start();
		one = start(redis.port(), "lettuce");
		two = start(redis.port(), "jedis");
	}

	@AfterAll
	static void stop() {
		two.close();
		one.close();
		redis.close();
	}

	@BeforeEach
	void flush() {
		redis.flushAll();
	}

	@Test
	void twoInstancesShareOneBudgetExactly() throws Exception {
		Http[] clients = { new Http(port(one)), new Http(port(two)) };
		Map<Integer, Integer> statuses = AtOnce.statuses(64, (i) -> () -> clients[i % 2].get("/limited").statusCode());
		assertThat(statuses).containsExactlyInAnyOrderEntriesOf(Map.of(200, 20, 429, 44));
		HttpResponse<String> rejected = clients[0].get("/limited");
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(rejected.headers().firstValue("Retry-After")).isPresent();
		assertThat(rejected.headers().firstValue("RateLimit-Policy")).hasValue("\"api\";q=20;w=3600");
		assertThat(rejected.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(one.getBean(RedisRateLimitStore.class).fallbacks()).isZero();
		assertThat(two.getBean(RedisRateLimitStore.class).fallbacks()).isZero();
	}

	@Test
	void twoInstancesShareTheSlotsOfAConcurrencyLimit() throws Exception {
		Http[] clients = { new Http(port(one)), new Http(port(two)) };
		ReactiveRedisApplication.Api.gate = new CompletableFuture<>();
		AtomicInteger refused = new AtomicInteger();
		// The two admitted requests are held until the ten others were refused: no slot comes back before.
		Map<Integer, Integer> statuses = AtOnce.statuses(12, (i) -> () -> {
			int status = clients[i % 2].get("/work?held=true").statusCode();
			if (status == 429 && refused.incrementAndGet() == 10) {
				ReactiveRedisApplication.Api.gate.complete(null);
			}
			return status;
		});
		assertThat(statuses).containsExactlyInAnyOrderEntriesOf(Map.of(200, 2, 429, 10));
		// Both slots come back once the servers completed the requests, a moment after the clients read them.
		int next = clients[1].get("/work?ms=0").statusCode();
		for (int i = 0; i < 40 && next == 429; i++) {
			Thread.sleep(50);
			next = clients[1].get("/work?ms=0").statusCode();
		}
		assertThat(next).as("both slots were given back").isEqualTo(200);
	}

	/**
	 * Requests that wait for their turn (delay mode) on a route that also has a concurrency limit (as many slots
	 * as requests: none is refused for arriving together) give their slots back while they wait and take them
	 * again, on Redis: store calls that block, never on an event loop.
	 */
	@Test
	void requestsThatWaitForTheirTurnGiveTheirSlotsBackMeanwhile() throws Exception {
		Http[] clients = { new Http(port(one)), new Http(port(two)) };
		long start = System.nanoTime();
		Map<Integer, Integer> statuses = AtOnce.statuses(4, (i) -> () -> clients[i % 2].get("/paced").statusCode());
		assertThat(statuses).containsExactlyInAnyOrderEntriesOf(Map.of(200, 4));
		assertThat(Duration.ofNanos(System.nanoTime() - start)).as("the last waited for its turn")
			.isGreaterThanOrEqualTo(Duration.ofMillis(700));
	}

	private static ConfigurableApplicationContext start(int redisPort, String client) {
		return new SpringApplicationBuilder(ReactiveRedisApplication.class).web(WebApplicationType.REACTIVE)
			.properties("server.port=0", "spring.main.banner-mode=off", "spring.data.redis.port=" + redisPort,
					"spring.data.redis.client-type=" + client,
					"rate-limit.store.type=redis", "rate-limit.store.redis.warm-up=200ms",
					"rate-limit.store.redis.timeout=5s",
					"rate-limit.policies.api.limit=20", "rate-limit.policies.api.period=1h",
					"rate-limit.policies.api.key=global", "rate-limit.rules[0].path=/limited",
					"rate-limit.rules[0].policies=api", "rate-limit.policies.slots.algorithm=concurrency",
					"rate-limit.policies.slots.limit=2", "rate-limit.policies.slots.key=global",
					"rate-limit.rules[1].path=/work", "rate-limit.rules[1].policies=slots",
					"rate-limit.policies.paced.limit=4", "rate-limit.policies.paced.period=1s",
					"rate-limit.policies.paced.burst=1", "rate-limit.policies.paced.key=global",
					"rate-limit.policies.paced.on-limit=delay", "rate-limit.policies.paced.max-delay=5s",
					"rate-limit.policies.paced-slots.algorithm=concurrency", "rate-limit.policies.paced-slots.limit=4",
					"rate-limit.policies.paced-slots.key=global",
					"rate-limit.rules[2].path=/paced", "rate-limit.rules[2].policies=paced,paced-slots")
			.run();
	}

	private static int port(ConfigurableApplicationContext context) {
		return ((WebServerApplicationContext) context).getWebServer().getPort();
	}

	/** A WebFlux application: {@code /limited} and {@code /work?ms=}, which answers after that long (or when released, {@code held=true}). */
	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import(ReactiveRedisApplication.Api.class)
	static class ReactiveRedisApplication {

		@RestController
		static class Api {

			@GetMapping({ "/limited", "/paced" })
			Mono<String> limited() {
				return Mono.just("hello");
			}

			/** Holds {@code /work?held=true} until a test completes it (at most 10 s). */
			static volatile CompletableFuture<Void> gate = CompletableFuture.completedFuture(null);

			@GetMapping("/work")
			Mono<String> work(@RequestParam(defaultValue = "0") long ms,
					@RequestParam(defaultValue = "false") boolean held) {
				if (held) {
					return Mono.fromFuture(gate.thenApply((released) -> "worked")).timeout(Duration.ofSeconds(10));
				}
				return Mono.delay(Duration.ofMillis(ms)).thenReturn("worked");
			}

		}

	}

}
