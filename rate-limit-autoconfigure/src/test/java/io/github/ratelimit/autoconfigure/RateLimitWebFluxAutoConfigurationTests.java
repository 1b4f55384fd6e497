package io.github.ratelimit.autoconfigure;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.context.PropertyPlaceholderAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.server.reactive.ReactiveWebServerFactory;
import org.springframework.boot.webflux.autoconfigure.WebFluxAutoConfiguration;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.reactive.DispatcherHandler;
import org.springframework.web.server.WebFilter;

import io.github.ratelimit.core.CaffeineRateLimitStore;
import io.github.ratelimit.core.RateLimitStore;
import io.github.ratelimit.test.ManualClock;
import io.github.ratelimit.web.limiter.RequestLimiter;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which stack gets which beans: a WebFlux application gets the web filter and the handler adapter, and no
 * servlet bean; a servlet application gets no reactive bean; an application's own store wins on both.
 */
class RateLimitWebFluxAutoConfigurationTests {

	private final AutoConfigurations autoConfigurations = AutoConfigurations.of(
			PropertyPlaceholderAutoConfiguration.class, RateLimitUnknownPropertiesAutoConfiguration.class,
			RateLimitAutoConfiguration.class, RateLimitWebFluxAutoConfiguration.class);

	private final ReactiveWebApplicationContextRunner reactive = new ReactiveWebApplicationContextRunner()
		.withConfiguration(this.autoConfigurations)
		.withConfiguration(AutoConfigurations.of(WebFluxAutoConfiguration.class))
		.withPropertyValues("rate-limit.policies.api.limit=5", "rate-limit.policies.api.period=1m",
				"rate-limit.rules[0].path=/api/**", "rate-limit.rules[0].policies=api");

	@Test
	void aReactiveApplicationGetsTheWebFilterAndTheHandlerAdapterAndNoServletBean() {
		this.reactive.run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context).hasBean("rateLimitWebFilter").hasBean("rateLimitHandlerAdapter");
			assertThat(context.getBean("rateLimitWebFilter")).isInstanceOf(WebFilter.class);
			assertThat(context).hasSingleBean(RequestLimiter.class).hasSingleBean(CaffeineRateLimitStore.class);
			assertThat(context).doesNotHaveBean("rateLimitFilter").doesNotHaveBean("rateLimitInterceptor");
		});
	}

	@Test
	void aReactiveApplicationNeedsNoServletClass() {
		this.reactive.withClassLoader(new FilteredClassLoader("jakarta.servlet.", "org.springframework.web.servlet."))
			.withPropertyValues("rate-limit.policies.api.key=#{ip}")
			.run((context) -> {
				assertThat(context).hasNotFailed().hasBean("rateLimitWebFilter");
				// Every bean made, the client IP resolver's included.
				context.getBeansOfType(Object.class);
			});
	}

	@Test
	void aServletApplicationGetsNoReactiveBeanAndNeedsNoWebFluxClass() {
		new WebApplicationContextRunner().withConfiguration(this.autoConfigurations)
			.withConfiguration(AutoConfigurations.of(WebMvcAutoConfiguration.class))
			.withClassLoader(new FilteredClassLoader(DispatcherHandler.class))
			.run((context) -> {
				assertThat(context).hasNotFailed().hasBean("rateLimitFilter");
				assertThat(context).doesNotHaveBean("rateLimitWebFilter").doesNotHaveBean("rateLimitHandlerAdapter");
			});
	}

	@Test
	void anApplicationsOwnWebFilterOfTheFiltersNameWins() {
		this.reactive.withBean("rateLimitWebFilter", WebFilter.class, () -> (exchange, chain) -> chain.filter(exchange))
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBeansOfType(WebFilter.class).values())
					.noneMatch((filter) -> filter.getClass().getSimpleName().equals("RateLimitWebFilter"));
			});
	}

	@Test
	void anApplicationsOwnStoreWins() {
		this.reactive.withUserConfiguration(OwnStore.class).run((context) -> {
			assertThat(context).hasSingleBean(RateLimitStore.class);
			assertThat(context.getBean(RateLimitStore.class)).isSameAs(context.getBean("ownStore"));
		});
	}

	@Test
	void disabledRegistersNothing() {
		this.reactive.withPropertyValues("rate-limit.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean("rateLimitWebFilter"));
	}

	@Test
	void badConfigurationFailsTheStartNamingTheProperty() {
		this.reactive.withPropertyValues("rate-limit.policies.api.brust=5")
			.run((context) -> assertThat(context).hasFailed());
		this.reactive.withPropertyValues("rate-limit.policies.api.key=header:")
			.run((context) -> assertThat(context).getFailure().rootCause()
				.hasMessageContaining("rate-limit.policies.api.key"));
	}

	@Test
	void aServerOtherThanNettyThatRewritesTheRemoteAddressFailsTheStart() {
		this.reactive.withBean(ReactiveWebServerFactory.class, () -> (handler) -> null)
			.withPropertyValues("server.forward-headers-strategy=framework")
			.run((context) -> assertThat(context).getFailure()
				.hasMessageContaining("server.forward-headers-strategy")
				.hasMessageContaining("reads the connection's peer on Reactor Netty only"));
		this.reactive.withBean(ReactiveWebServerFactory.class, () -> (handler) -> null)
			.withPropertyValues("server.forward-headers-strategy=framework", "rate-limit.client-ip.source=container")
			.run((context) -> assertThat(context).as("the server's resolution, on purpose").hasNotFailed());
		this.reactive.withBean(ReactiveWebServerFactory.class, () -> (handler) -> null)
			.run((context) -> assertThat(context).as("no forwarding").hasNotFailed());
	}

	@Configuration(proxyBeanMethods = false)
	static class OwnStore {

		@Bean
		CaffeineRateLimitStore ownStore() {
			return new CaffeineRateLimitStore(100, new ManualClock());
		}

	}

}
