package io.github.ratelimit.autoconfigure;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.assertj.AssertableWebApplicationContext;
import org.springframework.boot.test.context.runner.ContextConsumer;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.RateLimitConfigurationException;
import io.github.ratelimit.web.policy.ConfiguredPolicy;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A concurrency limit takes a limit (and a key, a cost, plans that change the limit); the settings of
 * rates make no sense with it and fail the start-up, naming the property.
 */
class ConcurrencyConfigurationTests {

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(WebMvcAutoConfiguration.class, RateLimitAutoConfiguration.class))
		.withPropertyValues("rate-limit.policies.uploads.algorithm=concurrency", "rate-limit.policies.uploads.limit=2");

	@Test
	void aLimitIsAllItNeeds() {
		this.runner.withPropertyValues("rate-limit.policies.uploads.plan=header:X-Plan",
				"rate-limit.policies.uploads.plans.pro.limit=8").run((context) -> {
					assertThat(context).hasNotFailed();
					ConfiguredPolicy policy = ConfiguredPolicy.of(context, "uploads");
					assertThat(policy.limit().algorithm()).isEqualTo(Algorithm.CONCURRENCY);
					assertThat(policy.limit().limit()).isEqualTo(2);
				});
	}

	@Test
	void theSettingsOfRatesNameTheirProperty() {
		this.runner.withPropertyValues("rate-limit.policies.uploads.period=1m")
			.run(failsWith("rate-limit.policies.uploads.period: period does not apply to algorithm: concurrency"));
		this.runner.withPropertyValues("rate-limit.policies.uploads.burst=4")
			.run(failsWith("rate-limit.policies.uploads.burst: burst does not apply to algorithm: concurrency"));
		this.runner.withPropertyValues("rate-limit.policies.uploads.on-limit=delay", "rate-limit.policies.uploads.max-delay=1s")
			.run(failsWith("rate-limit.policies.uploads.on-limit: on-limit: delay needs an algorithm with a turn to wait for"));
		this.runner.withPropertyValues("rate-limit.policies.uploads.count=failures")
			.run(failsWith("rate-limit.policies.uploads.count: count: failures cannot go with algorithm: concurrency"));
	}

	@Test
	void aPlanMayChangeTheLimitOnly() {
		this.runner.withPropertyValues("rate-limit.policies.uploads.plan=header:X-Plan",
				"rate-limit.policies.uploads.plans.pro.period=1m")
			.run(failsWith("rate-limit.policies.uploads.plans.pro.period: period does not apply to algorithm: concurrency"));
		this.runner.withPropertyValues("rate-limit.policies.uploads.plan=header:X-Plan",
				"rate-limit.policies.uploads.plans.pro.burst=5")
			.run(failsWith("rate-limit.policies.uploads.plans.pro.burst: burst does not apply"));
		this.runner.withPropertyValues("rate-limit.policies.uploads.plan=header:X-Plan",
				"rate-limit.policies.uploads.plans.pro.limit=0")
			.run(failsWith("rate-limit.policies.uploads.plans.pro.limit: a concurrency limit must be between 1 and 10000"));
	}

	@Test
	void theLimitIsRequiredAndPositive() {
		new WebApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(WebMvcAutoConfiguration.class, RateLimitAutoConfiguration.class))
			.withPropertyValues("rate-limit.policies.uploads.algorithm=concurrency")
			.run(failsWith("rate-limit.policies.uploads.limit: no limit is set"));
		this.runner.withPropertyValues("rate-limit.policies.uploads.limit=0")
			.run(failsWith("rate-limit.policies.uploads.limit: a concurrency limit must be between 1 and 10000 requests in flight per key, was 0"));
		this.runner.withPropertyValues("rate-limit.policies.uploads.limit=10001")
			.run(failsWith("rate-limit.policies.uploads.limit: a concurrency limit must be between 1 and 10000"));
		this.runner.withPropertyValues("rate-limit.policies.uploads.cost=3")
			.run(failsWith("rate-limit.policies.uploads.cost: cost must be between 1 and the burst (2)"));
	}

	private static ContextConsumer<AssertableWebApplicationContext> failsWith(String message) {
		return (context) -> {
			assertThat(context).hasFailed();
			Throwable failure = context.getStartupFailure();
			while (!(failure instanceof RateLimitConfigurationException) && failure.getCause() != null) {
				failure = failure.getCause();
			}
			assertThat(failure).isInstanceOf(RateLimitConfigurationException.class);
			assertThat(failure.getMessage()).contains(message);
		};
	}
}
