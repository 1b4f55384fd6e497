package io.github.ratelimit.gateway.mvc;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.cloud.gateway.server.mvc.filter.FilterSupplier;

import io.github.ratelimit.autoconfigure.RateLimitAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Server MVC's beans exist only in a servlet application with the gateway on the class path, and none of the
 * WebFlux flavour's; a route of {@code application.yml} naming a policy that does not exist fails the start-up.
 */
class RateLimitGatewayMvcAutoConfigurationTests {

	/** Every auto-configuration of the gateway module, the WebFlux flavour's included. */
	private final WebApplicationContextRunner runner = new WebApplicationContextRunner().withConfiguration(
			AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitGatewayMvcAutoConfiguration.class,
					io.github.ratelimit.gateway.RateLimitGatewayAutoConfiguration.class,
					io.github.ratelimit.gateway.RateLimitGatewayRateLimiterAutoConfiguration.class));

	@Test
	void aServletGatewayGetsTheFilterAndNoneOfTheWebFluxFlavoursBeans() {
		this.runner.run((context) -> {
			assertThat(context).hasSingleBean(MvcRoutePolicies.class).hasBean("rateLimitedFilterSupplier");
			assertThat(context).doesNotHaveBean("rateLimitGatewayRoutePolicies")
				.doesNotHaveBean("rateLimitedRateLimiter")
				.doesNotHaveBean("rateLimitFormBodyCache");
		});
		this.runner.withClassLoader(new FilteredClassLoader(FilterSupplier.class))
			.run((context) -> assertThat(context).doesNotHaveBean(MvcRoutePolicies.class));
		this.runner.withPropertyValues("rate-limit.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(MvcRoutePolicies.class)
				.as("routes that name policies still start, and let every request through")
				.hasBean("rateLimitedFilterSupplier"));
	}

	@Test
	void aRouteNamingAPolicyThatDoesNotExistFailsTheStart() {
		assertThatThrownBy(() -> new SpringApplicationBuilder(MvcGatewayApplication.class)
			// Not the tests' application.yml: this route alone.
			.properties("spring.config.name=none", "server.port=0", "spring.main.banner-mode=off",
					"rate-limit.policies.small.limit=2", "rate-limit.policies.small.period=1m",
					"spring.cloud.gateway.server.webmvc.routes[0].id=typo",
					"spring.cloud.gateway.server.webmvc.routes[0].uri=http://127.0.0.1:1",
					"spring.cloud.gateway.server.webmvc.routes[0].predicates[0]=Path=/api/**",
					"spring.cloud.gateway.server.webmvc.routes[0].filters[0]=RateLimited=smal")
			.run()
			.close())
			.hasStackTraceContaining("spring.cloud.gateway.server.webmvc.routes[0].filters[0]")
			.hasStackTraceContaining("no policy named 'smal'");
	}

}
