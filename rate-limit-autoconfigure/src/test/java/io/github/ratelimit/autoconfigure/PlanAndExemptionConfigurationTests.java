package io.github.ratelimit.autoconfigure;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.assertj.AssertableWebApplicationContext;
import org.springframework.boot.test.context.runner.ContextConsumer;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import io.github.ratelimit.core.RateLimitConfigurationException;
import io.github.ratelimit.web.RateLimited;
import io.github.ratelimit.web.policy.ConfiguredPolicy;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Plans and exemptions that cannot work fail the start-up, naming the property.
 */
class PlanAndExemptionConfigurationTests {

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(WebMvcAutoConfiguration.class, RateLimitAutoConfiguration.class))
		.withPropertyValues("rate-limit.policies.api.limit=2", "rate-limit.policies.api.period=1m",
				"rate-limit.policies.api.plan=header:X-Plan");

	@Test
	void plansAreBuiltFromThePolicysValues() {
		this.runner.withPropertyValues("rate-limit.policies.api.plans.pro.limit=10",
				"rate-limit.policies.api.plans.partner.period=1s").run((context) -> {
					assertThat(context).hasNotFailed();
					assertThat(ConfiguredPolicy.of(context, "api").limit().limit()).isEqualTo(2);
				});
	}

	@Test
	void aPlanWithABadLimitNamesIt() {
		this.runner.withPropertyValues("rate-limit.policies.api.plans.pro.limit=0")
			.run(failsWith("rate-limit.policies.api.plans.pro.limit: limit must be positive, was 0"));
		this.runner.withPropertyValues("rate-limit.policies.api.plans.pro.period=0s")
			.run(failsWith("rate-limit.policies.api.plans.pro.period: period must be positive"));
	}

	@Test
	void anUnknownPlanPropertyNamesIt() {
		this.runner.withPropertyValues("rate-limit.policies.api.plans.pro.algorithm=fixed-window")
			.run(failsWith("rate-limit.policies.api.plans.pro.algorithm: a plan sets only limit, period and burst"));
		this.runner.withPropertyValues("rate-limit.policies.api.plans.pro.limt=10")
			.run(failsWith("rate-limit.policies.api.plans.pro.limt"));
	}

	@Test
	void theCostIsCheckedAgainstEveryPlansBurst() {
		this.runner
			.withPropertyValues("rate-limit.policies.api.limit=10", "rate-limit.policies.api.cost=3",
					"rate-limit.policies.api.plans.tiny.limit=2")
			.run(failsWith("rate-limit.policies.api.plans.tiny.burst: the burst of plan 'tiny' (2) is below the cost"));
	}

	@Test
	void anAnnotationsCostIsCheckedAgainstEveryPlansBurst() {
		this.runner.withPropertyValues("rate-limit.policies.api.limit=10", "rate-limit.policies.api.plans.tiny.limit=2")
			.withUserConfiguration(CostlyController.class)
			.run(failsWith("@RateLimited(cost) on " + CostlyController.class.getName() + "#report(): cost must be "
					+ "between 1 and the burst (2) of policy 'api' and of each of its plans, was 3"));
		this.runner.withPropertyValues("rate-limit.policies.api.limit=10", "rate-limit.policies.api.plans.big.limit=20")
			.withUserConfiguration(CostlyController.class)
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@RestController
	static class CostlyController {

		@GetMapping("/report")
		@RateLimited(value = "api", cost = 3)
		String report() {
			return "report";
		}

	}

	@Test
	void plansNeedASource() {
		new WebApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(WebMvcAutoConfiguration.class, RateLimitAutoConfiguration.class))
			.withPropertyValues("rate-limit.policies.api.limit=2", "rate-limit.policies.api.period=1m",
					"rate-limit.policies.api.plans.pro.limit=10")
			.run(failsWith("rate-limit.policies.api.plan: plans are defined but no plan source is set"));
		this.runner.withPropertyValues("rate-limit.policies.api.plan=ip", "rate-limit.policies.api.plans.pro.limit=10")
			.run(failsWith("rate-limit.policies.api.plan: unknown plan source 'ip'"));
		this.runner.withPropertyValues("rate-limit.policies.api.plan=@nope", "rate-limit.policies.api.plans.pro.limit=10")
			.run(failsWith("rate-limit.policies.api.plan: no bean named 'nope'"));
	}

	@Test
	void unparseableExemptionsNameTheirProperty() {
		this.runner.withPropertyValues("rate-limit.policies.api.exempt-when=user ==")
			.run(failsWith("rate-limit.policies.api.exempt-when: cannot parse the SpEL condition 'user =='"));
		this.runner.withPropertyValues("rate-limit.exempt.when=header('X') = = 'y'")
			.run(failsWith("rate-limit.exempt.when: cannot parse the SpEL condition"));
		this.runner.withPropertyValues("rate-limit.exempt.ips=10.0.0.0/8,10.0.0.300")
			.run(failsWith("rate-limit.exempt.ips[1]"));
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
