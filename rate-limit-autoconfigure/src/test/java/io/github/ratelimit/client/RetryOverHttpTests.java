package io.github.ratelimit.client;

import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration;
import org.springframework.boot.http.client.autoconfigure.HttpClientAutoConfiguration;
import org.springframework.boot.http.client.autoconfigure.imperative.ImperativeHttpClientAutoConfiguration;
import org.springframework.boot.http.converter.autoconfigure.HttpMessageConvertersAutoConfiguration;
import org.springframework.boot.restclient.RestTemplateBuilder;
import org.springframework.boot.restclient.autoconfigure.RestClientAutoConfiguration;
import org.springframework.boot.restclient.autoconfigure.RestTemplateAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.http.HttpEntity;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.ResponseEntity;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.ClientHttpResponse;
import org.springframework.web.client.HttpStatusCodeException;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestTemplate;

import io.github.ratelimit.autoconfigure.RateLimitClientAutoConfiguration;
import io.github.ratelimit.client.ScriptedHttpServer.Reply;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The interceptor installed by the auto-configuration, against a real HTTP server, through a
 * {@code RestClient} from Spring Boot's {@code RestClient.Builder} and a {@code RestTemplate} from
 * its {@code RestTemplateBuilder}. Waits are recorded, not slept, except in one test that sleeps a
 * few milliseconds.
 */
class RetryOverHttpTests {

	private static ScriptedHttpServer server;

	private final RecordingSleeper sleeper = new RecordingSleeper();

	/** Sees every response the server sends, since it runs inside the retry interceptor. */
	private final List<HttpHeaders> seen = new CopyOnWriteArrayList<>();

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(SslAutoConfiguration.class, HttpClientAutoConfiguration.class,
				ImperativeHttpClientAutoConfiguration.class, HttpMessageConvertersAutoConfiguration.class,
				RestClientAutoConfiguration.class, RestTemplateAutoConfiguration.class,
				RateLimitClientAutoConfiguration.class))
		.withPropertyValues("rate-limit.client.retry.enabled=true");

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
		this.path = "/" + info.getTestMethod().orElseThrow().getName() + "/" + info.getDisplayName().hashCode();
	}

	@ParameterizedTest
	@EnumSource
	void retriesAfterRetryAfterSeconds(Client client) {
		server.script(this.path, Reply.of(429, "slow down", "Retry-After", "1"), Reply.of(200, "ok"));
		withSleeper().run((context) -> {
			assertThat(client.call(context, this.seen, HttpMethod.GET, server.url(this.path), null))
				.isEqualTo(new Result(200, "ok"));
			assertThat(this.sleeper.sleeps()).containsExactly(Duration.ofSeconds(1));
			assertThat(server.received(this.path)).containsExactly("GET ", "GET ");
		});
	}

	@ParameterizedTest
	@EnumSource
	void retriesAfterRetryAfterHttpDateRelativeToTheServersDate(Client client) {
		// the JDK server sets Date itself when it sends the response
		server.script(this.path, () -> {
			Instant inTwoSeconds = Instant.now().truncatedTo(ChronoUnit.SECONDS).plusSeconds(2);
			return new Reply(429, Map.of("Retry-After", RetryAfterInterceptorTests.httpDate(inTwoSeconds)), "");
		}, Reply.of(200, "ok"));
		withSleeper().run((context) -> {
			assertThat(client.call(context, this.seen, HttpMethod.GET, server.url(this.path), null))
				.isEqualTo(new Result(200, "ok"));
			HttpHeaders first = this.seen.get(0);
			assertThat(first.getFirst(HttpHeaders.RETRY_AFTER)).endsWith(" GMT");
			Duration expected = Duration.between(RetryAfter.httpDate(first.getFirst(HttpHeaders.DATE)),
					RetryAfter.httpDate(first.getFirst(HttpHeaders.RETRY_AFTER)));
			assertThat(expected).isBetween(Duration.ofSeconds(1), Duration.ofSeconds(2));
			assertThat(this.sleeper.sleeps()).containsExactly(expected);
		});
	}

	@ParameterizedTest
	@EnumSource
	void backsOffWithJitterWithoutRetryAfter(Client client) {
		server.script(this.path, Reply.of(429, "slow down"), Reply.of(429, "slow down"), Reply.of(200, "ok"));
		withSleeper().run((context) -> {
			assertThat(client.call(context, this.seen, HttpMethod.GET, server.url(this.path), null))
				.isEqualTo(new Result(200, "ok"));
			// base-delay 100ms: [50ms, 100ms), then [100ms, 200ms)
			assertThat(this.sleeper.sleeps()).hasSize(2);
			assertThat(this.sleeper.sleeps().get(0)).isBetween(Duration.ofMillis(50), Duration.ofMillis(100));
			assertThat(this.sleeper.sleeps().get(1)).isBetween(Duration.ofMillis(100), Duration.ofMillis(200));
			assertThat(server.received(this.path)).hasSize(3);
		});
	}

	@ParameterizedTest
	@EnumSource
	void returnsTheLast429AfterMaxAttempts(Client client) {
		server.script(this.path, Reply.of(429, "still too many", "Retry-After", "1"));
		withSleeper().run((context) -> {
			assertThat(client.call(context, this.seen, HttpMethod.GET, server.url(this.path), null))
				.isEqualTo(new Result(429, "still too many"));
			assertThat(server.received(this.path)).hasSize(3);
			assertThat(this.sleeper.sleeps()).containsExactly(Duration.ofSeconds(1), Duration.ofSeconds(1));
		});
	}

	@ParameterizedTest
	@EnumSource
	void returnsA429AtOnceWhenRetryAfterExceedsTheTotalWait(Client client) {
		server.script(this.path, Reply.of(429, "come back in an hour", "Retry-After", "3600"), Reply.of(200, "ok"));
		withSleeper().run((context) -> {
			assertThat(client.call(context, this.seen, HttpMethod.GET, server.url(this.path), null))
				.isEqualTo(new Result(429, "come back in an hour"));
			assertThat(server.received(this.path)).hasSize(1);
			assertThat(this.sleeper.sleeps()).isEmpty();
		});
	}

	@ParameterizedTest
	@EnumSource
	void doesNotRetryPostByDefault(Client client) {
		server.script(this.path, Reply.of(429, "slow down", "Retry-After", "1"), Reply.of(201, "created {body}"));
		withSleeper().run((context) -> {
			assertThat(client.call(context, this.seen, HttpMethod.POST, server.url(this.path), "{\"n\":1}"))
				.isEqualTo(new Result(429, "slow down"));
			assertThat(server.received(this.path)).containsExactly("POST {\"n\":1}");
		});
	}

	@ParameterizedTest
	@EnumSource
	void retriesPostWhenConfiguredAndSendsTheBodyAgain(Client client) {
		server.script(this.path, Reply.of(429, "slow down", "Retry-After", "1"), Reply.of(201, "created {body}"));
		withSleeper().withPropertyValues("rate-limit.client.retry.methods=get,post").run((context) -> {
			assertThat(client.call(context, this.seen, HttpMethod.POST, server.url(this.path), "{\"n\":1}"))
				.isEqualTo(new Result(201, "created {\"n\":1}"));
			assertThat(server.received(this.path)).containsExactly("POST {\"n\":1}", "POST {\"n\":1}");
		});
	}

	@ParameterizedTest
	@EnumSource
	void retriesPutAndSendsTheBodyAgain(Client client) {
		server.script(this.path, Reply.of(429, "slow down"), Reply.of(200, "stored {body}"));
		withSleeper().run((context) -> {
			assertThat(client.call(context, this.seen, HttpMethod.PUT, server.url(this.path), "{\"n\":2}"))
				.isEqualTo(new Result(200, "stored {\"n\":2}"));
			assertThat(server.received(this.path)).containsExactly("PUT {\"n\":2}", "PUT {\"n\":2}");
		});
	}

	@ParameterizedTest
	@EnumSource
	void retriesA503OnlyWithRetryAfter(Client client) {
		server.script(this.path + "/with", Reply.of(503, "down", "Retry-After", "1"), Reply.of(200, "up"));
		server.script(this.path + "/without", Reply.of(503, "down"), Reply.of(200, "up"));
		withSleeper().run((context) -> {
			assertThat(client.call(context, this.seen, HttpMethod.GET, server.url(this.path + "/with"), null))
				.isEqualTo(new Result(200, "up"));
			assertThat(client.call(context, this.seen, HttpMethod.GET, server.url(this.path + "/without"), null))
				.isEqualTo(new Result(503, "down"));
			assertThat(server.received(this.path + "/without")).hasSize(1);
		});
	}

	@ParameterizedTest
	@EnumSource
	void sleepsForRealWithTheDefaultSleeper(Client client) {
		server.script(this.path, Reply.of(429, "slow down"), Reply.of(429, "slow down"), Reply.of(200, "ok"));
		// waits of 5ms to 20ms in all
		this.runner
			.withPropertyValues("rate-limit.client.retry.base-delay=10ms", "rate-limit.client.retry.max-delay=10ms")
			.run((context) -> {
				assertThat(context.getBeanProvider(Sleeper.class).getIfAvailable()).isNull();
				assertThat(client.call(context, this.seen, HttpMethod.GET, server.url(this.path), null))
					.isEqualTo(new Result(200, "ok"));
				assertThat(server.received(this.path)).hasSize(3);
			});
	}

	@ParameterizedTest
	@EnumSource
	void doesNotRetryWhenNotEnabled(Client client) {
		server.script(this.path, Reply.of(429, "slow down", "Retry-After", "1"), Reply.of(200, "ok"));
		withSleeper().withPropertyValues("rate-limit.client.retry.enabled=false").run((context) -> {
			assertThat(client.call(context, this.seen, HttpMethod.GET, server.url(this.path), null))
				.isEqualTo(new Result(429, "slow down"));
			assertThat(server.received(this.path)).hasSize(1);
		});
	}

	private ApplicationContextRunner withSleeper() {
		return this.runner.withBean(Sleeper.class, () -> this.sleeper);
	}

	record Result(int status, String body) {
	}

	enum Client {

		REST_CLIENT {
			@Override
			Result call(ApplicationContext context, ClientHttpRequestInterceptor recorder, HttpMethod method,
					String url, String body) {
				RestClient client = context.getBean(RestClient.Builder.class).requestInterceptor(recorder).build();
				RestClient.RequestBodySpec request = client.method(method).uri(url);
				if (body != null) {
					request.header(HttpHeaders.CONTENT_TYPE, "application/json").body(body);
				}
				return request.exchange((req, response) -> new Result(response.getStatusCode().value(),
						response.bodyTo(String.class)));
			}
		},

		REST_TEMPLATE {
			@Override
			Result call(ApplicationContext context, ClientHttpRequestInterceptor recorder, HttpMethod method,
					String url, String body) {
				RestTemplate template = context.getBean(RestTemplateBuilder.class)
					.additionalInterceptors(recorder)
					.build();
				HttpHeaders headers = new HttpHeaders();
				headers.set(HttpHeaders.CONTENT_TYPE, "application/json");
				try {
					ResponseEntity<String> entity = template.exchange(url, method,
							new HttpEntity<>(body, headers), String.class);
					return new Result(entity.getStatusCode().value(), entity.getBody());
				}
				catch (HttpStatusCodeException ex) {
					return new Result(ex.getStatusCode().value(), ex.getResponseBodyAsString());
				}
			}
		};

		Result call(ApplicationContext context, List<HttpHeaders> seen, HttpMethod method, String url, String body) {
			ClientHttpRequestInterceptor recorder = (request, bytes, execution) -> {
				ClientHttpResponse response = execution.execute(request, bytes);
				seen.add(HttpHeaders.copyOf(response.getHeaders()));
				return response;
			};
			return call(context, recorder, method, url, body);
		}

		abstract Result call(ApplicationContext context, ClientHttpRequestInterceptor recorder, HttpMethod method,
				String url, String body);

	}

}
