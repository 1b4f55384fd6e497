package io.github.ratelimit.client;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration;
import org.springframework.boot.http.client.autoconfigure.HttpClientAutoConfiguration;
import org.springframework.boot.http.client.autoconfigure.reactive.ReactiveHttpClientAutoConfiguration;
import org.springframework.boot.http.codec.autoconfigure.CodecsAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.webclient.autoconfigure.WebClientAutoConfiguration;
import org.springframework.http.ResponseEntity;
import org.springframework.web.reactive.function.client.WebClient;

import io.github.ratelimit.autoconfigure.RateLimitClientAutoConfiguration;
import io.github.ratelimit.client.ScriptedHttpServer.Reply;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code WebClient} retries through {@link RetryAfterExchangeFilter}, installed in Spring Boot's
 * {@code WebClient.Builder} by {@code rate-limit.client.retry.enabled=true}, against a real HTTP server: the same
 * rule as the {@code RestClient} interceptor, waiting on a timer.
 */
class WebClientRetryTests {

	private static ScriptedHttpServer server;

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(SslAutoConfiguration.class, HttpClientAutoConfiguration.class,
				ReactiveHttpClientAutoConfiguration.class, CodecsAutoConfiguration.class, WebClientAutoConfiguration.class,
				RateLimitClientAutoConfiguration.class))
		.withPropertyValues("rate-limit.client.retry.enabled=true", "rate-limit.client.retry.base-delay=10ms",
				"rate-limit.client.retry.max-delay=50ms",
				// Each test closes its context: no 2 s of quiet for Reactor Netty's resources.
				"spring.reactor.netty.shutdown-quiet-period=0s");

	private String path;

	@BeforeAll
	static void startServer() throws IOException {
		server = new ScriptedHttpServer();
	}

	@AfterAll
	static void stopServer() {
		server.close();
	}

	@BeforeEach
	void path(TestInfo info) {
		this.path = "/" + info.getTestMethod().orElseThrow().getName();
	}

	@Test
	void aBuiltWebClientRetriesA429AfterItsRetryAfter() {
		server.script(this.path, Reply.of(429, "slow down", "Retry-After", "1"), Reply.of(200, "ok"));
		this.runner.run((context) -> {
			WebClient client = context.getBean(WebClient.Builder.class).build();
			long start = System.nanoTime();
			ResponseEntity<String> response = client.get().uri(server.url(this.path)).retrieve().toEntity(String.class)
				.block(Duration.ofSeconds(10));
			assertThat(response.getStatusCode().value()).isEqualTo(200);
			assertThat(response.getBody()).isEqualTo("ok");
			assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(950));
			assertThat(server.received(this.path)).containsExactly("GET ", "GET ");
		});
	}

	@Test
	void aBuiltWebClientBacksOffWithoutRetryAfterAndGivesUpAfterMaxAttempts() {
		server.script(this.path, Reply.of(429, "slow down"));
		this.runner.run((context) -> {
			WebClient client = context.getBean(WebClient.Builder.class).build();
			ResponseEntity<String> response = client.get().uri(server.url(this.path)).retrieve()
				.onStatus((status) -> true, (ignored) -> Mono.empty()).toEntity(String.class).block(Duration.ofSeconds(10));
			assertThat(response.getStatusCode().value()).as("the last response, as it came").isEqualTo(429);
			assertThat(response.getBody()).isEqualTo("slow down");
			assertThat(server.received(this.path)).as("3 attempts by default").hasSize(3);
		});
	}

	@Test
	void aRequestWithABodyOrOfAMethodNotRetriedIsSentOnce() {
		server.script(this.path, Reply.of(429, "slow down", "Retry-After", "0"));
		this.runner.run((context) -> {
			WebClient client = context.getBean(WebClient.Builder.class).build();
			client.put().uri(server.url(this.path)).bodyValue("payload").retrieve().toBodilessEntity()
				.onErrorResume((ex) -> Mono.empty()).block(Duration.ofSeconds(10));
			client.post().uri(server.url(this.path)).retrieve().toBodilessEntity()
				.onErrorResume((ex) -> Mono.empty()).block(Duration.ofSeconds(10));
			assertThat(server.received(this.path)).containsExactly("PUT payload", "POST ");
		});
	}

	@Test
	void aServiceUnavailableWithoutRetryAfterIsNotRetried() {
		server.script(this.path, Reply.of(503, "down"));
		this.runner.run((context) -> {
			WebClient client = context.getBean(WebClient.Builder.class).build();
			client.get().uri(server.url(this.path)).retrieve().toBodilessEntity()
				.onErrorResume((ex) -> Mono.empty()).block(Duration.ofSeconds(10));
			assertThat(server.received(this.path)).hasSize(1);
		});
	}

	@Test
	void theWaitsAreTimersOnTheGivenScheduler() {
		server.script(this.path, Reply.of(429, "slow down", "Retry-After", "30"), Reply.of(200, "ok"));
		List<Duration> timers = new CopyOnWriteArrayList<>();
		// Runs each timer at once, and records how long it was set for.
		Scheduler timer = new Scheduler() {

			@Override
			public Disposable schedule(Runnable task) {
				task.run();
				return Disposables.disposed();
			}

			@Override
			public Disposable schedule(Runnable task, long delay, TimeUnit unit) {
				timers.add(Duration.ofNanos(unit.toNanos(delay)));
				return schedule(task);
			}

			@Override
			public Worker createWorker() {
				return Schedulers.immediate().createWorker();
			}

		};
		RetryAfterExchangeFilter filter = new RetryAfterExchangeFilter(
				RetryAfterInterceptor.builder().maxTotalWait(Duration.ofMinutes(1)).build(), timer);
		String body = WebClient.builder().filter(filter).build().get().uri(server.url(this.path)).retrieve()
			.bodyToMono(String.class).block(Duration.ofSeconds(10));
		assertThat(body).isEqualTo("ok");
		assertThat(timers).containsExactly(Duration.ofSeconds(30));
		assertThat(server.received(this.path)).hasSize(2);
	}

}
