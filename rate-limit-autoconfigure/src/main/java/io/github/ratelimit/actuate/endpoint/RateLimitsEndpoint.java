package io.github.ratelimit.actuate.endpoint;

import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.Ban;
import io.github.ratelimit.core.Decision;
import io.github.ratelimit.core.RateLimitConfigurationException;
import io.github.ratelimit.core.RateLimitStore;
import io.github.ratelimit.web.key.KeyResolvers;
import io.github.ratelimit.web.policy.AnnotatedEndpoints;
import io.github.ratelimit.web.policy.PolicyChanges;
import io.github.ratelimit.web.policy.RateLimitPolicies;
import io.github.ratelimit.web.policy.RateLimitPolicy;
import io.github.ratelimit.web.policy.RateLimitPolicyResolver;

/**
 * The {@code ratelimits} endpoint: {@code GET} lists the policies (resolved settings), the path rules
 * and the annotated endpoints; {@code GET /{policy}/{key}} shows one key's budget;
 * {@code DELETE /{policy}/{key}} resets it (e.g. unlocks a user); {@code POST /{policy}} changes a named
 * policy's limit, period, burst and plans at run time, {@code DELETE /{policy}} returns it to its
 * configured values (both logged at INFO with the old and new values; with a store shared by every
 * instance, such as Redis, kept there and applied by every instance). Keys are written as the limiter
 * stores them, with their source: {@code ip:203.0.113.7}, {@code ip:2001:db8:7:8::/64},
 * {@code param:alice}, {@code user:bob}; the key is the rest of the path, so a network key's
 * {@code /} needs no encoding. A key is read as a request's would be made: an address in any form
 * finds its network's key ({@code ip:::ffff:203.0.113.7}, {@code ip:2001:db8:7:8::1}), a long value its
 * hashed key; the answer shows the key found. An unknown policy answers 404. {@code DELETE} changes state: protect
 * the endpoint (see the operations documentation).
 */
@Endpoint(id = "ratelimits")
public class RateLimitsEndpoint {

	/** Why a change or restore finds no policy where a read would: only named policies change. */
	private static final String CHANGEABLE = "runtime changes apply to the policies named under rate-limit.policies";

	private final RateLimitPolicies policies;

	private final RateLimitPolicyResolver resolver;

	private final AnnotatedEndpoints annotatedEndpoints;

	private final RateLimitStore store;

	private final KeyResolvers keys;

	private final boolean shadowMode;

	/** Whether the rest of the path given to a key's operations starts with the policy (WebFlux's mapping). */
	private final boolean policyInRemainingPath;

	/**
	 * Creates the endpoint.
	 * @param policies the named policies
	 * @param resolver holds the path rules
	 * @param annotatedEndpoints the annotated handlers
	 * @param store the store
	 * @param keys reads a key as written into the key the store holds
	 * @param shadowMode whether {@code rate-limit.mode} is shadow
	 * @param policyInRemainingPath whether the rest of a key's path, as the web stack gives it, starts with the
	 * policy's segment: Spring Boot's WebFlux mapping extracts it from the first template variable on
	 */
	public RateLimitsEndpoint(RateLimitPolicies policies, RateLimitPolicyResolver resolver,
			AnnotatedEndpoints annotatedEndpoints, RateLimitStore store, KeyResolvers keys, boolean shadowMode,
			boolean policyInRemainingPath) {
		this.policies = policies;
		this.resolver = resolver;
		this.annotatedEndpoints = annotatedEndpoints;
		this.store = store;
		this.keys = keys;
		this.shadowMode = shadowMode;
		this.policyInRemainingPath = policyInRemainingPath;
	}

	/**
	 * Lists the configuration in force.
	 * @return policies, rules and annotated endpoints
	 */
	@ReadOperation
	public RateLimitsDescriptor rateLimits() {
		Map<String, PolicyDescriptor> policies = new LinkedHashMap<>();
		this.policies.all().forEach((policy) -> policies.put(policy.name(), PolicyDescriptor.of(policy)));
		List<RuleDescriptor> rules = this.resolver.rules()
			.stream()
			.map((rule) -> new RuleDescriptor(rule.pattern().getPatternString(), new TreeSet<>(rule.methods()),
					rule.policies().stream().map(RateLimitPolicy::name).toList()))
			.toList();
		Map<String, List<PolicyDescriptor>> endpoints = new LinkedHashMap<>();
		this.annotatedEndpoints.endpoints()
			.forEach((method, applied) -> endpoints.put(method, applied.stream().map(PolicyDescriptor::of).toList()));
		return new RateLimitsDescriptor(this.shadowMode ? "shadow" : "enforce", this.store.getClass().getSimpleName(),
				policies, rules, endpoints);
	}

	/**
	 * Shows one key's budget ({@code GET /{policy}/{key}}), or without a key the policy in force
	 * ({@code GET /{policy}}, as {@code POST} and {@code DELETE} of that path answer it).
	 * @param policy the policy name
	 * @param key the key as shown, e.g. {@code ip:203.0.113.7} or {@code ip:2001:db8::/64}: the rest
	 * of the path, so a key may contain {@code /}; none for the policy
	 * @return the budget or the policy; 404 when there is no such policy; 503 when the store did not answer
	 */
	@ReadOperation
	public WebEndpointResponse<Object> key(@Selector String policy,
			@Selector(match = Selector.Match.ALL_REMAINING) String[] key) {
		RateLimitPolicy found = find(policy);
		if (found == null) {
			return notFound(policy, "GET /actuator/ratelimits lists the policies and the annotated endpoints' ones");
		}
		String canonical = keyOf(policy, key);
		if (canonical == null) {
			return new WebEndpointResponse<>(PolicyDescriptor.of(found), WebEndpointResponse.STATUS_OK);
		}
		try {
			return new WebEndpointResponse<>(describe(found, canonical), WebEndpointResponse.STATUS_OK);
		}
		catch (IllegalStateException ex) {
			return unavailable(policy, canonical, ex, "nothing was read");
		}
	}

	/**
	 * Resets one key's budget, so it is whole again.
	 * @param policy the policy name
	 * @param key the key as shown, e.g. {@code param:alice}: the rest of the path
	 * @return the budget now; 404 when there is no such policy; 503 when the store did not answer
	 */
	@DeleteOperation
	public WebEndpointResponse<Object> reset(@Selector String policy,
			@Selector(match = Selector.Match.ALL_REMAINING) String[] key) {
		RateLimitPolicy found = find(policy);
		if (found == null) {
			return notFound(policy, "GET /actuator/ratelimits lists the policies and the annotated endpoints' ones");
		}
		String canonical = keyOf(policy, key);
		if (canonical == null) {
			return new WebEndpointResponse<>(WebEndpointResponse.STATUS_NOT_FOUND);
		}
		try {
			this.store.reset(found.id(), canonical);
		}
		catch (IllegalStateException ex) {
			return unavailable(policy, canonical, ex, "the reset may not have happened");
		}
		try {
			return new WebEndpointResponse<>(describe(found, canonical));
		}
		catch (IllegalStateException ex) {
			return unavailable(policy, canonical, ex, "the reset was done, the budget after it could not be read");
		}
	}

	/** 503 for a key's read or reset the store did not answer. */
	private static WebEndpointResponse<Object> unavailable(String policy, String key, IllegalStateException ex,
			String outcome) {
		return PolicyChanges.answer(WebEndpointResponse.STATUS_SERVICE_UNAVAILABLE, "policy", policy, "key", key,
				"message", ex.getMessage() + "; " + outcome, "action", "Retry when the store answers");
	}

	private KeyDescriptor describe(RateLimitPolicy policy, String key) {
		Acquisition acquisition = policy.acquisitionOf(key);
		Decision state = this.store.peek(acquisition);
		// A concurrency limit's free slots say how many of the key's requests are in flight (one read).
		Long inFlight = policy.limit().algorithm().isRate() ? null : Math.max(0, state.limit() - state.remaining());
		long bannedNanos = (policy.ban() != null) ? this.store.bannedNanos(acquisition) : 0;
		return new KeyDescriptor(policy.name(), key, state.limit(), state.remaining(),
				Duration.ofNanos(state.resetNanos()).toMillis(), inFlight,
				(bannedNanos > 0) ? Instant.now().plusNanos(bannedNanos) : null);
	}

	/**
	 * Changes a named policy without a restart ({@code POST /{policy}} with a JSON body of
	 * {@code limit}, {@code period}, {@code burst} and {@code plans}, each optional), validated
	 * exactly as at start-up; what keys have spent stays spent.
	 * @param policy the policy name
	 * @param limit the new quota per period
	 * @param period the new period, e.g. {@code 1m}
	 * @param burst the new capacity
	 * @param plans the new plans, by name, each with {@code limit}, {@code period}, {@code burst}
	 * @return the policy as it is now; 404 for an unknown policy; 400 naming the bad field; 503 when the
	 * store shared by every instance did not take the change (nothing changed)
	 */
	@WriteOperation
	public WebEndpointResponse<Object> change(@Selector String policy, @Nullable Object limit,
			@Nullable Object period, @Nullable Object burst, @Nullable Object plans) {
		if (this.policies.get(policy) == null) {
			return notFound(policy, CHANGEABLE);
		}
		String prefix = "rate-limit.policies." + policy;
		RateLimitPolicy changed;
		try {
			changed = this.policies.change(policy, PolicyChanges.read(prefix, limit, period, burst, plans));
		}
		catch (RateLimitConfigurationException ex) {
			return PolicyChanges.badRequest(policy, prefix, ex);
		}
		catch (IllegalStateException ex) {
			return notStored(policy, ex);
		}
		return (changed != null) ? new WebEndpointResponse<>(PolicyDescriptor.of(changed), WebEndpointResponse.STATUS_OK)
				: notFound(policy, CHANGEABLE);
	}

	/**
	 * Returns a named policy to its configured values ({@code DELETE /{policy}}), on every instance with a
	 * shared store.
	 * @param policy the policy name
	 * @return the policy as it is now; 404 for an unknown policy; 503 when the shared store did not take it
	 */
	@DeleteOperation
	public WebEndpointResponse<Object> restore(@Selector String policy) {
		RateLimitPolicy restored;
		try {
			restored = this.policies.restore(policy);
		}
		catch (IllegalStateException ex) {
			return notStored(policy, ex);
		}
		return (restored != null) ? new WebEndpointResponse<>(PolicyDescriptor.of(restored), WebEndpointResponse.STATUS_OK)
				: notFound(policy, CHANGEABLE);
	}

	private static WebEndpointResponse<Object> notStored(String policy, IllegalStateException ex) {
		return PolicyChanges.answer(WebEndpointResponse.STATUS_SERVICE_UNAVAILABLE, "policy", policy, "message",
				ex.getMessage() + "; nothing was changed on this instance", "action",
				"Retry when the store answers; GET /actuator/ratelimits shows the values in force");
	}

	private static WebEndpointResponse<Object> notFound(String policy, String hint) {
		return PolicyChanges.answer(WebEndpointResponse.STATUS_NOT_FOUND, "policy", policy, "message",
				"no policy named '" + policy + "' (" + hint + ")");
	}

	private @Nullable RateLimitPolicy find(String name) {
		RateLimitPolicy named = this.policies.get(name);
		return (named != null) ? named : this.annotatedEndpoints.endpoints()
			.values()
			.stream()
			.flatMap(List::stream)
			.filter((policy) -> policy.name().equals(name))
			.findFirst()
			.orElse(null);
	}

	/**
	 * The whole configuration.
	 *
	 * @param mode enforce or shadow
	 * @param store the store's type
	 * @param policies named policies
	 * @param rules path rules
	 * @param endpoints annotated handler methods and their policies
	 */
	public record RateLimitsDescriptor(String mode, String store, Map<String, PolicyDescriptor> policies,
			List<RuleDescriptor> rules, Map<String, List<PolicyDescriptor>> endpoints) {
	}

	/**
	 * One policy's resolved settings.
	 *
	 * @param name the name
	 * @param algorithm the algorithm
	 * @param limit the quota per period
	 * @param period the period; {@code null} for a concurrency limit, which has none
	 * @param burst the capacity
	 * @param key the key setting
	 * @param cost tokens per request
	 * @param count which requests count
	 * @param maxDelay the longest wait in delay mode, {@code null} when rejecting
	 * @param shadow whether it only observes
	 */
	public record PolicyDescriptor(String name, String algorithm, long limit, @Nullable Duration period, long burst, String key,
			long cost, String count, @Nullable Duration maxDelay, boolean shadow, Map<String, PlanDescriptor> plans,
			boolean overridden, RateLimitPolicy.@Nullable SlowDown slowDown, @Nullable BanDescriptor ban) {

		static PolicyDescriptor of(RateLimitPolicy policy) {
			Map<String, PlanDescriptor> plans = new LinkedHashMap<>();
			policy.plans()
				.forEach((name, limit) -> plans.put(name,
						new PlanDescriptor(limit.limit(), limit.algorithm().isRate() ? limit.period() : null, limit.burst())));
			return new PolicyDescriptor(policy.name(), policy.limit().algorithm().id(), policy.limit().limit(),
					policy.limit().algorithm().isRate() ? policy.limit().period() : null, policy.limit().burst(),
					policy.keySpec(), policy.cost(),
					policy.count().name().toLowerCase(Locale.ROOT),
					(policy.maxDelayNanos() > 0) ? Duration.ofNanos(policy.maxDelayNanos()) : null, policy.shadow(),
					plans, policy.isOverridden(), policy.slowDown(), BanDescriptor.of(policy.ban()));
		}

	}

	/**
	 * A policy's ban.
	 *
	 * @param after the lockout answers that ban a key
	 * @param within how long after the first of them they count
	 * @param duration how long a key is banned
	 */
	public record BanDescriptor(long after, Duration within, Duration duration) {

		static @Nullable BanDescriptor of(@Nullable Ban ban) {
			return (ban != null) ? new BanDescriptor(ban.after(), Duration.ofNanos(ban.withinNanos()),
					Duration.ofNanos(ban.durationNanos())) : null;
		}

	}

	/**
	 * One plan's values in force.
	 *
	 * @param limit the quota per period
	 * @param period the period; {@code null} for a concurrency limit
	 * @param burst the capacity
	 */
	public record PlanDescriptor(long limit, @Nullable Duration period, long burst) {
	}

	/**
	 * One path rule.
	 *
	 * @param path the pattern
	 * @param methods the methods (empty for all)
	 * @param policies the policy names
	 */
	public record RuleDescriptor(String path, Set<String> methods, List<String> policies) {
	}

	/**
	 * One key's budget.
	 *
	 * @param policy the policy
	 * @param key the key
	 * @param limit the quota per period
	 * @param remaining the tokens left now
	 * @param resetMillis milliseconds until the budget is whole again (0 for a concurrency limit)
	 * @param inFlight for a concurrency limit, the key's requests in flight; {@code null} for a rate
	 * @param bannedUntil when the key's ban ends; {@code null} when it is not banned
	 */
	public record KeyDescriptor(String policy, String key, long limit, long remaining, long resetMillis,
			@Nullable Long inFlight, @Nullable Instant bannedUntil) {
	}

	/**
	 * The key the store holds for the rest of the path (without the policy's segment WebFlux's mapping repeats);
	 * {@code null} when the path names no key.
	 */
	private @Nullable String keyOf(String policy, String[] remaining) {
		String[] key = (this.policyInRemainingPath && remaining.length > 0 && remaining[0].equals(policy))
				? Arrays.copyOfRange(remaining, 1, remaining.length) : remaining;
		return (key.length == 0) ? null : this.keys.canonical(String.join("/", key));
	}
}
