package io.github.ratelimit.web.policy;

import java.util.List;
import java.util.Set;

import org.jspecify.annotations.Nullable;

import org.springframework.context.ApplicationContext;

import io.github.ratelimit.core.Limit;

/**
 * For tests in other packages: what the auto-configuration made of a policy, in public types only (the
 * policies themselves are package-private).
 * @param id the store's limit id
 * @param name the policy's name
 * @param limit its limit
 * @param keySpec its key
 * @param cost what a request costs
 * @param maxDelayNanos how long a request may wait for its turn
 */
public record ConfiguredPolicy(String id, String name, Limit limit, String keySpec, long cost, long maxDelayNanos) {

	/**
	 * Finds a configured policy ({@code rate-limit.policies.*}).
	 * @param context the application context
	 * @param name the policy's name
	 * @return the policy, or {@code null} when none has that name
	 */
	public static @Nullable ConfiguredPolicy of(ApplicationContext context, String name) {
		RateLimitPolicy policy = context.getBean(RateLimitPolicies.class).get(name);
		return (policy != null) ? of(policy) : null;
	}

	/**
	 * Returns the names of the configured policies, in configuration order.
	 * @param context the application context
	 * @return the names
	 */
	public static Set<String> names(ApplicationContext context) {
		return context.getBean(RateLimitPolicies.class).names();
	}

	/**
	 * Finds the policy of an {@code @RateLimited} handler by its name.
	 * @param context the application context
	 * @param name the policy's name
	 * @return the policy
	 */
	public static ConfiguredPolicy annotated(ApplicationContext context, String name) {
		return of(context.getBean(AnnotatedEndpoints.class)
			.endpoints()
			.values()
			.stream()
			.flatMap(List::stream)
			.filter((policy) -> policy.name().equals(name))
			.findFirst()
			.orElseThrow());
	}

	private static ConfiguredPolicy of(RateLimitPolicy policy) {
		return new ConfiguredPolicy(policy.id(), policy.name(), policy.limit(), policy.keySpec(), policy.cost(),
				policy.maxDelayNanos());
	}
}
