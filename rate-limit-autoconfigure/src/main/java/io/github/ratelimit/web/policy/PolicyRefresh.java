package io.github.ratelimit.web.policy;

import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.boot.context.properties.bind.BindHandler;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.cloud.context.environment.EnvironmentChangeEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.core.Ordered;
import org.springframework.core.env.Environment;

import io.github.ratelimit.autoconfigure.RateLimitProperties;

/**
 * Applies a refreshed {@code rate-limit.policies.*} (Spring Cloud's {@link EnvironmentChangeEvent}, sent
 * by {@code ContextRefresher}, the {@code refresh} endpoint or Spring Cloud Bus) as new configured values
 * of the named policies: {@code limit}, {@code period}, {@code burst} and {@code plans}, validated as at
 * start-up, what keys spent staying spent; a change made at run time stays over them. A value that
 * cannot be bound or validated is logged as an ERROR and the policy keeps what it had; other settings
 * (algorithm, key, cost...), new and removed policies are logged as a WARN: they take effect at the next
 * start. Runs before Spring Cloud rebinds {@code @ConfigurationProperties} beans (whose failure on a value
 * that cannot be bound fails the refresh call itself, after this has logged it). Thread-safe (events are
 * handled one at a time).
 */
public final class PolicyRefresh implements ApplicationListener<EnvironmentChangeEvent>, Ordered {

	private static final Log logger = LogFactory.getLog(PolicyRefresh.class);

	private static final String PREFIX = "rate-limit.policies";

	private final Environment environment;

	private final RateLimitPolicies policies;

	/** The policies as bound at start-up or at the last refresh, for what only a restart applies. */
	private Map<String, RateLimitProperties.Policy> bound;

	public PolicyRefresh(Environment environment, RateLimitPolicies policies) {
		this.environment = environment;
		this.policies = policies;
		this.bound = bind();
	}

	@Override
	public int getOrder() {
		return Ordered.HIGHEST_PRECEDENCE;
	}

	@Override
	public synchronized void onApplicationEvent(EnvironmentChangeEvent event) {
		if (event.getKeys().stream().noneMatch(PolicyRefresh::mayConcernPolicies)) {
			return;
		}
		Map<String, RateLimitProperties.Policy> refreshed;
		try {
			refreshed = bind();
		}
		catch (RuntimeException ex) {
			logger.error("The refreshed " + PREFIX + " cannot be read (" + ex.getMessage()
					+ (ex.getCause() != null ? ": " + ex.getCause().getMessage() : "")
					+ "); every policy keeps its values");
			return;
		}
		Set<String> unapplied = new LinkedHashSet<>();
		for (String name : this.policies.names()) {
			RateLimitProperties.Policy now = refreshed.get(name);
			if (now == null) {
				unapplied.add(name + " (removed)");
				continue;
			}
			RateLimitProperties.Policy before = this.bound.get(name);
			if (before != null && !sameRestartOnlySettings(before, now)) {
				unapplied.add(name + " (algorithm, key, cost, on-limit, max-delay, count, shadow, plan, exempt-when, slow-down or ban)");
			}
			this.policies.reconfigure(name, now.limit(), now.period(), now.burst(), now.plans());
		}
		refreshed.keySet()
			.stream()
			.filter((name) -> this.policies.get(name) == null)
			.forEach((name) -> unapplied.add(name + " (new)"));
		if (!unapplied.isEmpty()) {
			logger.warn("The refreshed " + PREFIX + " changes settings that apply at the next start only: "
					+ String.join(", ", unapplied) + "; a refresh applies limit, period, burst and plans");
		}
		this.bound = refreshed;
	}

	private static boolean mayConcernPolicies(String key) {
		// Keys as their property sources spell them: rate-limit.policies.x.limit, RATE_LIMIT_POLICIES_X_LIMIT...
		String uniform = key.toLowerCase(java.util.Locale.ROOT).replace("-", "").replace("_", ".");
		return uniform.startsWith("ratelimit.policies") || uniform.startsWith("rate.limit.policies");
	}

	private Map<String, RateLimitProperties.Policy> bind() {
		return Binder.get(this.environment)
			.bind(PREFIX, Bindable.mapOf(String.class, RateLimitProperties.Policy.class),
					new ConfiguredLimits.PolicyPropertiesCheck(BindHandler.DEFAULT, this.environment))
			.orElseGet(Map::of);
	}

	private static boolean sameRestartOnlySettings(RateLimitProperties.Policy a, RateLimitProperties.Policy b) {
		return a.algorithm() == b.algorithm() && Objects.equals(a.key(), b.key()) && a.cost() == b.cost()
				&& a.onLimit() == b.onLimit() && Objects.equals(a.maxDelay(), b.maxDelay()) && a.count() == b.count()
				&& a.shadow() == b.shadow() && Objects.equals(a.plan(), b.plan())
				&& Objects.equals(a.exemptWhen(), b.exemptWhen()) && Objects.equals(a.slowDown(), b.slowDown())
				&& Objects.equals(a.ban(), b.ban());
	}
}
