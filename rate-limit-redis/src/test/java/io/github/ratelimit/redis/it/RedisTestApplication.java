package io.github.ratelimit.redis.it;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.Delay;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.data.redis.autoconfigure.LettuceClientConfigurationBuilderCustomizer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * The application the end-to-end tests run, on the Redis store: {@code /limited} is limited by a
 * path rule (policy {@code api}, global key), {@code /double} by two policies at once (rules for
 * {@code api} and {@code strict}), {@code /tunable} by {@code tunable} (2 an hour per {@code X-Client}, which
 * tests change at run time), {@code /login?ok=} answers 200 or 401, {@code /free} is not limited,
 * {@code /work} waits at a gate the test opens, limited to 2 in flight (policy {@code slots}, global key). Lettuce reconnects every 50 ms, so that
 * tests that restart Redis need not wait for its default back-off.
 */
@SpringBootApplication
@RestController
public class RedisTestApplication {

	@GetMapping({ "/limited", "/double", "/free", "/tunable" })
	String hello() {
		return "hello";
	}

	/** Where {@code /work} requests wait until a test opens it (shared by every instance of the JVM). */
	static volatile java.util.concurrent.CountDownLatch gate = new java.util.concurrent.CountDownLatch(0);

	static final java.util.concurrent.Semaphore arrivals = new java.util.concurrent.Semaphore(0);

	@GetMapping("/work")
	String work() throws InterruptedException {
		arrivals.release();
		if (!gate.await(30, java.util.concurrent.TimeUnit.SECONDS)) {
			throw new IllegalStateException("the gate was never opened");
		}
		return "worked";
	}

	@GetMapping("/login")
	ResponseEntity<String> login(@RequestParam boolean ok) {
		return ok ? ResponseEntity.ok("welcome") : ResponseEntity.status(HttpStatus.UNAUTHORIZED).body("no");
	}

	/** A login that takes {@code ms} milliseconds to check a password ({@code ok}), so that guesses overlap. */
	@PostMapping("/guess")
	ResponseEntity<String> guess(@RequestParam boolean ok, @RequestParam(defaultValue = "0") long ms)
			throws InterruptedException {
		Thread.sleep(ms);
		return login(ok);
	}

	@Bean
	LettuceClientConfigurationBuilderCustomizer fastReconnect() {
		return (builder) -> builder.clientResources(
				DefaultClientResources.builder().reconnectDelay(Delay.constant(Duration.ofMillis(50))).build());
	}

	/**
	 * Starts an instance on a random port.
	 * @param properties {@code name=value} pairs
	 * @return the running application
	 */
	public static ConfigurableApplicationContext start(String... properties) {
		Map<String, String> values = new LinkedHashMap<>();
		// A short warm-up: each of the many instances the tests start would spend up to 2 s on it.
		for (String property : List.of("server.port=0", "spring.main.banner-mode=off", "rate-limit.store.type=redis",
				"rate-limit.store.redis.warm-up=200ms",
				"rate-limit.policies.api.limit=10", "rate-limit.policies.api.period=1h",
				"rate-limit.policies.api.key=global", "rate-limit.policies.strict.limit=3",
				"rate-limit.policies.strict.period=1h", "rate-limit.policies.strict.key=global",
				"rate-limit.rules[0].path=/limited", "rate-limit.rules[0].policies=api", "rate-limit.rules[1].path=/double",
				"rate-limit.rules[1].policies=api,strict", "rate-limit.policies.slots.algorithm=concurrency",
				"rate-limit.policies.slots.limit=2", "rate-limit.policies.slots.key=global", "rate-limit.rules[2].path=/work",
				"rate-limit.rules[2].policies=slots", "rate-limit.policies.tunable.limit=2",
				"rate-limit.policies.tunable.period=1h", "rate-limit.policies.tunable.key=header:X-Client",
				"rate-limit.rules[3].path=/tunable", "rate-limit.rules[3].policies=tunable")) {
			put(values, property);
		}
		for (String property : properties) {
			put(values, property);
		}
		String[] args = values.entrySet().stream().map((e) -> "--" + e.getKey() + "=" + e.getValue()).toArray(String[]::new);
		return new SpringApplicationBuilder(RedisTestApplication.class).run(args);
	}

	private static void put(Map<String, String> values, String property) {
		int equals = property.indexOf('=');
		values.put(property.substring(0, equals), property.substring(equals + 1));
	}

	static int port(ConfigurableApplicationContext context) {
		return Integer.parseInt(context.getEnvironment().getProperty("local.server.port"));
	}

	public static void main(String[] args) {
		SpringApplication.run(RedisTestApplication.class, args);
	}
}
