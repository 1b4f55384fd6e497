package io.github.ratelimit.web.policy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import io.github.ratelimit.core.RateLimitConfigurationException;
import io.github.ratelimit.core.SharedPolicyOverrides;

/**
 * The named policies of {@code rate-limit.policies}, and every change of their values at run time: from
 * the actuator endpoint, from other instances (through a store's {@link SharedPolicyOverrides}), from a
 * refreshed configuration. Each change is validated as start-up validates, what keys spent stays spent,
 * and each is logged once at INFO with the old and new values. The set of policies is fixed; thread-safe
 * (changes are serialized).
 */
public final class RateLimitPolicies {

	private static final Log logger = LogFactory.getLog(RateLimitPolicies.class);

	private final Map<String, RateLimitPolicy> byName;

	/** Where changes are kept for every instance; {@code null}: in this process only. */
	private volatile @Nullable SharedPolicyOverrides shared;

	/** Whether overrides were read from the shared store yet (the first read is the start-up's). */
	private boolean read;

	/**
	 * Creates the registry.
	 * @param policies the policies, by name
	 */
	RateLimitPolicies(Map<String, RateLimitPolicy> policies) {
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
	 * Finds the policies a route names (a gateway's {@code RateLimited=a,b}), each budget once.
	 * @param names the names, each maybe a comma-separated list
	 * @param origin where they are named, for the error
	 * @return the policies, in the order named
	 * @throws RateLimitConfigurationException when a name is no policy, or none is named
	 */
	public List<RateLimitPolicy> named(List<String> names, String origin) {
		List<RateLimitPolicy> named = new ArrayList<>(names.size());
		for (String listed : names) {
			for (String name : listed.split(",")) {
				RateLimitPolicy policy = require(name.trim(), origin);
				if (named.stream().noneMatch((other) -> other.id().equals(policy.id()))) {
					named.add(policy);
				}
			}
		}
		if (named.isEmpty()) {
			throw new RateLimitConfigurationException(origin, "names no policy",
					"Name one or more policies of rate-limit.policies: RateLimited=api,per-user");
		}
		return named;
	}

	/**
	 * Finds a policy that must exist.
	 * @param name its name as written (looked up trimmed)
	 * @param origin where it is named, for the error
	 * @return the policy
	 * @throws RateLimitConfigurationException when no policy has that name
	 */
	RateLimitPolicy require(String name, String origin) {
		RateLimitPolicy policy = get(name.trim());
		if (policy == null) {
			throw new RateLimitConfigurationException(origin, "no policy named '" + name + "'",
					"Define it under rate-limit.policies." + name.trim() + " (defined: " + String.join(", ", names()) + ")");
		}
		return policy;
	}

	/**
	 * Returns the policy names, in configuration order.
	 * @return the names
	 */
	Set<String> names() {
		return this.byName.keySet();
	}

	/**
	 * Returns the policies, in configuration order.
	 * @return the policies
	 */
	public Collection<RateLimitPolicy> all() {
		return this.byName.values();
	}

	/**
	 * Keeps the changes made at run time in a store every instance reads, and applies those it holds:
	 * now (an override in force at start-up is logged as a WARN naming the policy and its values) and
	 * whenever they change.
	 * @param overrides the shared store
	 */
	public void shareThrough(SharedPolicyOverrides overrides) {
		this.shared = overrides;
		overrides.listenToOverrides(this::applyShared);
	}

	/**
	 * Changes a policy's values (those the change sets; the others stay), validated as at start-up, kept
	 * for every instance when a shared store is set, and logged.
	 * @param name the policy's name
	 * @param change the values to set
	 * @return the policy, or {@code null} when there is no such policy
	 * @throws RateLimitConfigurationException naming the bad value's property; nothing changed then
	 * @throws IllegalStateException when the shared store did not take the change; nothing changed here
	 */
	public @Nullable RateLimitPolicy change(String name, RateLimitPolicy.Change change) {
		RateLimitPolicy policy = get(name);
		if (policy == null) {
			return null;
		}
		synchronized (this) {
			RateLimitPolicy.Change merged = policy.limits().merged(change);
			put(policy, merged, "changed at run time from ", " to ");
		}
		return policy;
	}

	/**
	 * Returns a policy to its configured values, for every instance when a shared store is set, and logs
	 * it.
	 * @param name the policy's name
	 * @return the policy, or {@code null} when there is no such policy
	 * @throws IllegalStateException when the shared store did not take the change; nothing changed here
	 */
	public @Nullable RateLimitPolicy restore(String name) {
		RateLimitPolicy policy = get(name);
		if (policy == null) {
			return null;
		}
		synchronized (this) {
			if (policy.isOverridden()) {
				put(policy, null, "restored from ", " to its configured ");
			}
			else if (this.shared != null) {
				// Not overridden here, maybe only not yet seen here: another instance's change is dropped for all.
				try {
					this.shared.storeOverride(policy.name(), null);
				}
				catch (RuntimeException ex) {
					throw (ex instanceof IllegalStateException state) ? state : new IllegalStateException(ex.getMessage(), ex);
				}
			}
		}
		return policy;
	}

	/** Applies here, then stores for every instance; undone here when the store did not take it. */
	private void put(RateLimitPolicy policy, RateLimitPolicy.@Nullable Change change, String from, String to) {
		PolicyLimits limits = policy.limits();
		RateLimitPolicy.Change previous = limits.change();
		PolicyLimits.InForce before = limits.replace(change);
		SharedPolicyOverrides overrides = this.shared;
		if (overrides != null) {
			try {
				overrides.storeOverride(policy.name(), (change != null) ? OverrideFormat.write(change) : null);
			}
			catch (RuntimeException ex) {
				limits.replace(previous);
				throw (ex instanceof IllegalStateException state) ? state : new IllegalStateException(ex.getMessage(), ex);
			}
		}
		logger.info("Rate limit policy '" + policy.name() + "' " + from + before + to + limits.inForce()
				+ ((overrides != null) ? " (kept in the shared store for every instance)" : ""));
	}

	/** The overrides every instance shares, as the store holds them now: applies those that differ. */
	private synchronized void applyShared(Map<String, String> stored) {
		SharedPolicyOverrides overrides = this.shared;
		if (overrides != null && !overrides.isCurrent(stored)) {
			// Read before a change made here landed (its caller held this lock): the store reads again.
			return;
		}
		boolean startUp = !this.read;
		this.read = true;
		for (RateLimitPolicy policy : this.byName.values()) {
			PolicyLimits limits = policy.limits();
			String value = stored.get(policy.name());
			String prefix = "rate-limit.policies." + policy.name();
			try {
				RateLimitPolicy.Change wanted = (value != null) ? OverrideFormat.read(value, prefix) : null;
				if (Objects.equals(wanted, limits.change())) {
					continue;
				}
				PolicyLimits.InForce before = limits.replace(wanted);
				if (startUp && wanted != null) {
					logger.warn("Rate limit policy '" + policy.name() + "' is changed by an override kept in the shared "
							+ "store: " + limits.inForce() + " instead of the configured "
							+ limits.configured() + " (" + value + "); DELETE /actuator/ratelimits/"
							+ policy.name() + " returns every instance to the configured values");
				}
				else {
					logger.info("Rate limit policy '" + policy.name() + "' "
							+ ((wanted != null) ? "changed on another instance from " + before + " to "
									: "restored on another instance from " + before + " to its configured ")
							+ limits.inForce());
				}
			}
			catch (RateLimitConfigurationException ex) {
				logger.error("Rate limit policy '" + policy.name() + "': the override kept in the shared store ("
						+ value + ") cannot be applied: " + ex.getMessage() + "; keeping " + limits.inForce());
			}
		}
	}

	/**
	 * Takes new configured values of a policy (a refreshed configuration), validated as at start-up; a
	 * change made at run time stays in force over them. Logged at INFO; a bad value is logged as an ERROR
	 * and changes nothing.
	 * @param name the policy's name
	 * @param limit the configured quota per period
	 * @param period the configured period
	 * @param burst the configured capacity, {@code null} for the default
	 * @param plans the configured plans
	 * @return {@code true} when applied (or nothing changed), {@code false} when refused
	 */
	synchronized boolean reconfigure(String name, @Nullable Long limit, @Nullable Duration period,
			@Nullable Long burst, Map<String, RateLimitPolicy.Plan> plans) {
		RateLimitPolicy policy = get(name);
		if (policy == null) {
			return false;
		}
		PolicyLimits limits = policy.limits();
		String configured = limits.configured().toString();
		String before;
		try {
			before = limits.reconfigure(limit, period, burst, plans).toString();
		}
		catch (RateLimitConfigurationException ex) {
			logger.error("Rate limit policy '" + name + "' keeps " + limits.inForce()
					+ ": the refreshed configuration is refused: " + ex.getMessage());
			return false;
		}
		String now = limits.inForce().toString();
		if (!configured.equals(limits.configured().toString()) || !before.equals(now)) {
			logger.info("Rate limit policy '" + name + "' refreshed from " + before + " to " + now
					+ (limits.isOverridden() ? " (a change made at run time stays over the configured "
							+ limits.configured() + ")" : ""));
		}
		return true;
	}
}
