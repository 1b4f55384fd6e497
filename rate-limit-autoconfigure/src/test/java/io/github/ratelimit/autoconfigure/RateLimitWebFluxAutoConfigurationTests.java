package io.github.ratelimit.autoconfigure;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.context.PropertyPlaceholderAutoConfiguration;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A WebFlux application is told, once, that it is not rate limited and why.
 */
@ExtendWith(OutputCaptureExtension.class)
class RateLimitWebFluxAutoConfigurationTests {

	private static final String WARNING = "Rate limiting is inactive: this is a reactive (WebFlux) application";

	private final AutoConfigurations autoConfigurations = AutoConfigurations.of(
			PropertyPlaceholderAutoConfiguration.class, RateLimitUnknownPropertiesAutoConfiguration.class,
			RateLimitAutoConfiguration.class, RateLimitWebFluxAutoConfiguration.class);

	@Test
	void aReactiveApplicationGetsOneWarningAndNoLimiter(CapturedOutput output) {
		new ReactiveWebApplicationContextRunner().withConfiguration(this.autoConfigurations)
			.withPropertyValues("rate-limit.policies.api.limit=0", "rate-limit.policies.api.period=1m")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context).doesNotHaveBean("rateLimitFilter");
				assertThat(context).doesNotHaveBean(RateLimitProperties.class);
			});
		assertThat(output).containsOnlyOnce(WARNING)
			.contains("limits Spring MVC (servlet) applications only")
			.contains("set rate-limit.enabled=false to turn this warning off");
	}

	@Test
	void disabledSaysNothing(CapturedOutput output) {
		new ReactiveWebApplicationContextRunner().withConfiguration(this.autoConfigurations)
			.withPropertyValues("rate-limit.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed());
		assertThat(output).doesNotContain(WARNING);
	}

	@Test
	void aServletApplicationSaysNothing(CapturedOutput output) {
		new WebApplicationContextRunner()
			.withConfiguration(this.autoConfigurations)
			.withConfiguration(AutoConfigurations.of(WebMvcAutoConfiguration.class))
			.run((context) -> assertThat(context).hasSingleBean(RateLimitProperties.class));
		assertThat(output).doesNotContain(WARNING);
	}

	@Test
	void typosStillFailInAReactiveApplication() {
		new ReactiveWebApplicationContextRunner().withConfiguration(this.autoConfigurations)
			.withPropertyValues("rate-limit.policies.api.brust=5")
			.run((context) -> assertThat(context).hasFailed());
	}

}
