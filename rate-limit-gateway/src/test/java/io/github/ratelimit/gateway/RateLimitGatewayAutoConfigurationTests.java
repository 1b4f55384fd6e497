package io.github.ratelimit.gateway;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.webflux.autoconfigure.WebFluxAutoConfiguration;
import org.springframework.cloud.gateway.filter.factory.GatewayFilterFactory;

import io.github.ratelimit.autoconfigure.RateLimitWebFluxAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The gateway's beans exist only in a reactive web application with Spring Cloud Gateway on the class path; with
 * the starter off its filter lets everything through; a route naming no policy, or an unknown one, fails as it is
 * defined.
 */
class RateLimitGatewayAutoConfigurationTests {

	private final ReactiveWebApplicationContextRunner reactive = new ReactiveWebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(WebFluxAutoConfiguration.class,
				RateLimitWebFluxAutoConfiguration.class, RateLimitGatewayAutoConfiguration.class,
				RateLimitGatewayRateLimiterAutoConfiguration.class));

	@Test
	void aReactiveGatewayGetsTheFilterNamedRateLimited() {
		this.reactive.run((context) -> {
			assertThat(context).hasSingleBean(RateLimitedGatewayFilterFactory.class);
			assertThat(context.getBean(RateLimitedGatewayFilterFactory.class).name()).isEqualTo("RateLimited");
			assertThat(context).hasSingleBean(GatewayRoutePolicies.class).hasSingleBean(FormBodyCache.class);
		});
	}

	@Test
	void noGatewayBeansWithoutTheGatewayOrTheStarter() {
		this.reactive.withClassLoader(new FilteredClassLoader(GatewayFilterFactory.class))
			.run((context) -> assertThat(context).doesNotHaveBean(GatewayRoutePolicies.class)
				.doesNotHaveBean(FormBodyCache.class));
		this.reactive.withPropertyValues("rate-limit.enabled=false").run((context) -> {
			// Routes that name policies still start, and let every request through.
			RateLimitedGatewayFilterFactory factory = context.getBean(RateLimitedGatewayFilterFactory.class);
			RateLimitedGatewayFilterFactory.Config config = factory.newConfig();
			config.setPolicies(java.util.List.of("api"));
			assertThat(factory.apply(config)).isNotInstanceOf(GatewayRoutePolicies.RouteFilter.class);
			assertThat(context).doesNotHaveBean(FormBodyCache.class);
			assertThat(context.getBean(PolicyRateLimiter.class).isAllowed("any", "key").block().isAllowed()).isTrue();
		});
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(RateLimitWebFluxAutoConfiguration.class,
					RateLimitGatewayAutoConfiguration.class))
			.run((context) -> assertThat(context).doesNotHaveBean(RateLimitedGatewayFilterFactory.class));
	}

	@Test
	void aRouteNamingAnUnknownPolicyFailsNamingThePoliciesThereAre() {
		this.reactive.withPropertyValues("rate-limit.policies.api.limit=5", "rate-limit.policies.api.period=1m").run((context) -> {
			RateLimitedGatewayFilterFactory factory = context.getBean(RateLimitedGatewayFilterFactory.class);
			RateLimitedGatewayFilterFactory.Config config = factory.newConfig();
			config.setPolicies(java.util.List.of("api", "apl"));
			org.assertj.core.api.Assertions.assertThatThrownBy(() -> factory.apply(config))
				.hasMessageContaining("RateLimited=api,apl")
				.hasMessageContaining("no policy named 'apl'")
				.hasMessageContaining("(defined: api)");
			config.setPolicies(java.util.List.of());
			org.assertj.core.api.Assertions.assertThatThrownBy(() -> factory.apply(config))
				.hasMessageContaining("names no policy");
		});
	}

}
