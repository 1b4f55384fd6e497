package io.github.ratelimit.autoconfigure;

import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.context.annotation.ImportCandidates;
import org.springframework.boot.restclient.RestClientCustomizer;
import org.springframework.boot.restclient.RestTemplateBuilder;
import org.springframework.boot.restclient.RestTemplateCustomizer;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.client.ClientHttpRequestExecution;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.mock.http.client.MockClientHttpRequest;
import org.springframework.mock.http.client.MockClientHttpResponse;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestTemplate;

import io.github.ratelimit.client.RetryAfterInterceptor;
import io.github.ratelimit.client.Sleeper;
import io.github.ratelimit.core.RateLimitConfigurationException;

import static org.assertj.core.api.Assertions.assertThat;

class RateLimitClientAutoConfigurationTests {

	private final List<Duration> sleeps = new ArrayList<>();

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitClientAutoConfiguration.class));

	@Test
	void isOffByDefault() {
		this.runner.run((context) -> {
			assertThat(context).doesNotHaveBean(RetryAfterInterceptor.class);
			assertThat(context).doesNotHaveBean(RestClientCustomizer.class);
			assertThat(context).doesNotHaveBean(RestTemplateCustomizer.class);
			assertThat(context).doesNotHaveBean(RateLimitClientProperties.class);
		});
	}

	@Test
	void enabledContributesTheInterceptorAndBothCustomizers() {
		this.runner.withPropertyValues("rate-limit.client.retry.enabled=true").run((context) -> {
			assertThat(context).hasSingleBean(RetryAfterInterceptor.class);
			assertThat(context).hasSingleBean(RestClientCustomizer.class);
			assertThat(context).hasSingleBean(RestTemplateCustomizer.class);
		});
	}

	@Test
	void doesNotNeedTheServerSide() {
		new ApplicationContextRunner()
			.withConfiguration(
					AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitClientAutoConfiguration.class))
			.withClassLoader(new FilteredClassLoader("jakarta.servlet", "org.springframework.web.servlet"))
			.withPropertyValues("rate-limit.enabled=false", "rate-limit.client.retry.enabled=true")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context).hasSingleBean(RetryAfterInterceptor.class);
				assertThat(context).doesNotHaveBean(RateLimitProperties.class);
			});
	}

	@Test
	void theServerSideDoesNotTurnTheClientSideOn() {
		new ApplicationContextRunner()
			.withConfiguration(
					AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitClientAutoConfiguration.class))
			.withPropertyValues("rate-limit.enabled=true")
			.run((context) -> assertThat(context).doesNotHaveBean(RetryAfterInterceptor.class));
	}

	@Test
	void propertiesConfigureTheInterceptor() {
		this.runner
			.withPropertyValues("rate-limit.client.retry.enabled=true", "rate-limit.client.retry.max-attempts=4",
					"rate-limit.client.retry.max-total-wait=3s", "rate-limit.client.retry.methods= post ,Patch")
			.withBean(Sleeper.class, () -> this.sleeps::add)
			.run((context) -> {
				RetryAfterInterceptor interceptor = context.getBean(RetryAfterInterceptor.class);
				// max-total-wait 3s stops the fourth attempt; max-attempts 4 would allow it
				assertThat(attempts(interceptor, HttpMethod.POST, "1")).isEqualTo(4);
				assertThat(this.sleeps).containsExactly(Duration.ofSeconds(1), Duration.ofSeconds(1),
						Duration.ofSeconds(1));
				assertThat(attempts(interceptor, HttpMethod.PATCH, "2")).isEqualTo(2);
				assertThat(attempts(interceptor, HttpMethod.GET, "1")).isEqualTo(1);
			});
	}

	@Test
	void backoffPropertiesConfigureTheInterceptor() {
		this.runner
			.withPropertyValues("rate-limit.client.retry.enabled=true", "rate-limit.client.retry.max-attempts=5",
					"rate-limit.client.retry.base-delay=1s", "rate-limit.client.retry.max-delay=2s",
					"rate-limit.client.retry.max-total-wait=1m")
			.withBean(Sleeper.class, () -> this.sleeps::add)
			.run((context) -> {
				assertThat(attempts(context.getBean(RetryAfterInterceptor.class), HttpMethod.GET, null)).isEqualTo(5);
				assertThat(this.sleeps).hasSize(4);
				assertThat(this.sleeps.get(0)).isBetween(Duration.ofMillis(500), Duration.ofSeconds(1));
				assertThat(this.sleeps.subList(1, 4))
					.allSatisfy((sleep) -> assertThat(sleep).isBetween(Duration.ofSeconds(1), Duration.ofSeconds(2)));
			});
	}

	@Test
	void defaultsAreTheBuildersDefaults() {
		RateLimitClientProperties.Retry retry = new RateLimitClientProperties().getRetry();
		assertThat(retry.isEnabled()).isFalse();
		assertThat(retry.getMaxAttempts()).isEqualTo(RetryAfterInterceptor.DEFAULT_MAX_ATTEMPTS);
		assertThat(retry.getBaseDelay()).isEqualTo(RetryAfterInterceptor.DEFAULT_BASE_DELAY);
		assertThat(retry.getMaxDelay()).isEqualTo(RetryAfterInterceptor.DEFAULT_MAX_DELAY);
		assertThat(retry.getMaxTotalWait()).isEqualTo(RetryAfterInterceptor.DEFAULT_MAX_TOTAL_WAIT);
		assertThat(retry.getMethods().stream().map(HttpMethod::valueOf))
			.containsExactlyElementsOf(RetryAfterInterceptor.IDEMPOTENT_METHODS);
	}

	@Test
	void userInterceptorWins() {
		RetryAfterInterceptor own = RetryAfterInterceptor.builder().maxAttempts(7).build();
		this.runner.withPropertyValues("rate-limit.client.retry.enabled=true")
			.withBean(RetryAfterInterceptor.class, () -> own)
			.run((context) -> {
				assertThat(context).getBean(RetryAfterInterceptor.class).isSameAs(own);
				RestTemplate template = new RestTemplate();
				context.getBean(RestTemplateCustomizer.class).customize(template);
				assertThat(template.getInterceptors()).containsExactly(own);
			});
	}

	@Test
	void customizersInstallTheInterceptorFirstAndOnce() {
		ClientHttpRequestInterceptor other = (request, body, execution) -> execution.execute(request, body);
		this.runner.withPropertyValues("rate-limit.client.retry.enabled=true").run((context) -> {
			RetryAfterInterceptor retry = context.getBean(RetryAfterInterceptor.class);

			RestClient.Builder builder = RestClient.builder().requestInterceptor(other);
			context.getBean(RestClientCustomizer.class).customize(builder);
			context.getBean(RestClientCustomizer.class).customize(builder);
			builder.requestInterceptors((interceptors) -> assertThat(interceptors).containsExactly(retry, other));

			RestTemplate template = new RestTemplate();
			template.getInterceptors().add(other);
			context.getBean(RestTemplateCustomizer.class).customize(template);
			context.getBean(RestTemplateCustomizer.class).customize(template);
			assertThat(template.getInterceptors()).containsExactly(retry, other);
		});
	}

	@Test
	void withoutSpringBootsRestClientModuleOnlyTheInterceptorIsContributed() {
		this.runner.withPropertyValues("rate-limit.client.retry.enabled=true")
			.withClassLoader(new FilteredClassLoader(RestClientCustomizer.class))
			.run((context) -> {
				assertThat(context).hasSingleBean(RetryAfterInterceptor.class);
				assertThat(context).doesNotHaveBean("rateLimitRetryRestClientCustomizer");
				assertThat(context).doesNotHaveBean("rateLimitRetryRestTemplateCustomizer");
			});
	}

	@Test
	void withoutSpringWebNothingIsContributed() {
		this.runner.withPropertyValues("rate-limit.client.retry.enabled=true")
			.withClassLoader(new FilteredClassLoader(ClientHttpRequestInterceptor.class))
			.run((context) -> assertThat(context).doesNotHaveBean(RetryAfterInterceptor.class));
	}

	@Test
	void badMaxAttemptsFailsNamingTheProperty() {
		assertFailure("rate-limit.client.retry.max-attempts=0", "rate-limit.client.retry.max-attempts",
				"max-attempts must be at least 1, was 0");
	}

	@Test
	void negativeDurationsFailNamingTheProperty() {
		assertFailure("rate-limit.client.retry.base-delay=-1s", "rate-limit.client.retry.base-delay",
				"base-delay must be zero or positive, was PT-1S");
		assertFailure("rate-limit.client.retry.max-delay=-1s", "rate-limit.client.retry.max-delay",
				"max-delay must be zero or positive, was PT-1S");
		assertFailure("rate-limit.client.retry.max-total-wait=-1ms", "rate-limit.client.retry.max-total-wait",
				"max-total-wait must be zero or positive, was PT-0.001S");
	}

	@Test
	void aDurationWithoutAUnitFailsNamingTheProperty() {
		// Read as milliseconds, max-total-wait: 5 would give up on every Retry-After.
		assertFailure("rate-limit.client.retry.max-total-wait=5", "rate-limit.client.retry.max-total-wait",
				"the duration '5' has no unit, which Spring Boot reads as milliseconds");
		assertFailure("rate-limit.client.retry.max-delay=2", "rate-limit.client.retry.max-delay",
				"the duration '2' has no unit, which Spring Boot reads as milliseconds");
		assertFailure("rate-limit.client.retry.base-delay=100", "rate-limit.client.retry.base-delay",
				"the duration '100' has no unit, which Spring Boot reads as milliseconds");
		this.runner.withPropertyValues("rate-limit.client.retry.enabled=true", "rate-limit.client.retry.base-delay=0")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void aRestTemplateKeepsTheRetryFirstAmongOrderedInterceptors() {
		// RestTemplate sorts its interceptors by order: one that is Ordered must still run again on each retry.
		ClientHttpRequestInterceptor ordered = new OrderedInterceptor();
		this.runner.withPropertyValues("rate-limit.client.retry.enabled=true").run((context) -> {
			RestTemplate template = new RestTemplateBuilder().additionalInterceptors(ordered)
				.additionalCustomizers(context.getBean(RestTemplateCustomizer.class))
				.build();
			assertThat(template.getInterceptors()).containsExactly(context.getBean(RetryAfterInterceptor.class), ordered);
		});
	}

	static final class OrderedInterceptor implements ClientHttpRequestInterceptor, org.springframework.core.Ordered {

		@Override
		public org.springframework.http.client.ClientHttpResponse intercept(org.springframework.http.HttpRequest request,
				byte[] body, ClientHttpRequestExecution execution) throws IOException {
			return execution.execute(request, body);
		}

		@Override
		public int getOrder() {
			return 0;
		}

	}

	@Test
	void badMethodFailsNamingTheProperty() {
		assertFailure("rate-limit.client.retry.methods=GET,GET PUT", "rate-limit.client.retry.methods[1]",
				"'GET PUT' is not an HTTP method");
	}

	@Test
	void isRegisteredAsAnAutoConfiguration() {
		assertThat(ImportCandidates.load(AutoConfiguration.class, getClass().getClassLoader()))
			.contains(RateLimitClientAutoConfiguration.class.getName());
	}

	@Test
	void aClientOnlyApplicationGetsRetriesWithTheServerSideOff() {
		SpringApplication application = new SpringApplication(ClientApp.class);
		application.setWebApplicationType(WebApplicationType.NONE);
		try (ConfigurableApplicationContext context = application.run("--spring.main.banner-mode=off",
				"--rate-limit.enabled=false", "--rate-limit.client.retry.enabled=true")) {
			assertThat(context.containsBean("rateLimitFilter")).isFalse();
			RetryAfterInterceptor retry = context.getBean(RetryAfterInterceptor.class);
			context.getBean(RestClient.Builder.class)
				.requestInterceptors((interceptors) -> assertThat(interceptors).startsWith(retry));
			assertThat(context.getBean(RestTemplateBuilder.class).build().getInterceptors()).startsWith(retry);
		}
	}

	private void assertFailure(String property, String origin, String problem) {
		this.runner.withPropertyValues("rate-limit.client.retry.enabled=true", property).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.isInstanceOfSatisfying(RateLimitConfigurationException.class, (ex) -> {
					assertThat(ex.getOrigin()).isEqualTo(origin);
					assertThat(ex.getProblem()).isEqualTo(problem);
				});
		});
	}

	/**
	 * Sends one request through the interceptor to a fake server that always answers 429, with
	 * {@code Retry-After} when given, and returns how many times it was sent.
	 */
	private static int attempts(RetryAfterInterceptor interceptor, HttpMethod method, String retryAfter)
			throws IOException {
		AtomicInteger attempts = new AtomicInteger();
		ClientHttpRequestExecution execution = (request, body) -> {
			attempts.incrementAndGet();
			MockClientHttpResponse response = new MockClientHttpResponse(new byte[0], HttpStatus.TOO_MANY_REQUESTS);
			if (retryAfter != null) {
				response.getHeaders().set(HttpHeaders.RETRY_AFTER, retryAfter);
			}
			return response;
		};
		interceptor.intercept(new MockClientHttpRequest(method, URI.create("http://localhost/")), new byte[0],
				execution);
		return attempts.get();
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class ClientApp {

	}

}
