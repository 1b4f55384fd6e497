package io.github.ratelimit.web.policy;

import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.web.clientip.IpAddressRange;
import io.github.ratelimit.web.key.KeyResolvers;

/**
 * For tests in other packages: builds policies as the configuration does, through the package's own
 * (package-private) factories, so that these need not be public for tests alone.
 */
public final class TestPolicies {

	private TestPolicies() {
	}

	/** As {@code RateLimitPolicy.define}. */
	public static RateLimitPolicy define(PolicyDefinition definition, KeyResolvers keyResolvers) {
		return RateLimitPolicy.define(definition, keyResolvers);
	}

	/** As {@code RateLimitPolicy.withPlans}, then {@code withExemption} when a condition is given. */
	public static RateLimitPolicy planned(RateLimitPolicy policy, String planSpec, Map<String, RateLimitPolicy.Plan> plans,
			String exemptWhen, KeyResolvers keyResolvers) {
		return policy.withPlans(planSpec, plans, keyResolvers, "rate-limit.policies." + policy.name())
			.withExemption(exemptWhen, keyResolvers, "rate-limit.policies." + policy.name() + ".exempt-when");
	}

	/** As {@code RateLimitPolicy.withSlowDown}. */
	public static RateLimitPolicy slowingDown(RateLimitPolicy policy, RateLimitPolicy.SlowDown slowDown) {
		return policy.withSlowDown(slowDown, "rate-limit.policies." + policy.name() + ".slow-down");
	}

	/** As {@code RateLimitExemptions.of}: the requests no policy limits. */
	public static RateLimitExemptions exemptions(List<IpAddressRange> ips, @Nullable String when,
			KeyResolvers keyResolvers) {
		return RateLimitExemptions.of(ips, when, keyResolvers, "rate-limit.exempt.when");
	}

	/** The named policies of a configuration. */
	public static RateLimitPolicies policies(Map<String, RateLimitPolicy> policies) {
		return new RateLimitPolicies(policies);
	}

}
