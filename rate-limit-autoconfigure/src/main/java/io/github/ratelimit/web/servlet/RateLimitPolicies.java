package io.github.ratelimit.web.servlet;

import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

import org.jspecify.annotations.Nullable;

/**
 * The named policies of {@code rate-limit.policies}. Immutable and thread-safe.
 */
final class RateLimitPolicies {

	private final Map<String, RateLimitPolicy> byName;

	/**
	 * Creates the registry.
	 * @param policies the policies, by name
	 */
	public RateLimitPolicies(Map<String, RateLimitPolicy> policies) {
		this.byName = Collections.unmodifiableMap(new LinkedHashMap<>(policies));
	}

	/**
	 * Finds a policy.
	 * @param name its name
	 * @return the policy, or {@code null} when none has that name
	 */
	public @Nullable RateLimitPolicy get(String name) {
		return this.byName.get(name);
	}

	/**
	 * Returns the policy names, in configuration order.
	 * @return the names
	 */
	public Set<String> names() {
		return this.byName.keySet();
	}

	/**
	 * Returns the policies, in configuration order.
	 * @return the policies
	 */
	public Collection<RateLimitPolicy> all() {
		return this.byName.values();
	}
}
