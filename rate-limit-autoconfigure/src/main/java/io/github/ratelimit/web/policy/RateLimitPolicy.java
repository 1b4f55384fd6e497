package io.github.ratelimit.web.policy;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.Ban;
import io.github.ratelimit.core.Limit;
import io.github.ratelimit.core.RateLimitConfigurationException;
import io.github.ratelimit.core.Receipt;
import io.github.ratelimit.web.CountMode;
import io.github.ratelimit.web.key.KeyResolvers;
import io.github.ratelimit.web.key.LimitedRequest;
import io.github.ratelimit.web.key.RequestCondition;
import io.github.ratelimit.web.key.RequestValue;
import io.github.ratelimit.web.key.UnreadableRequestException;

/**
 * A limit as it applies to requests: a budget ({@link Limit}) identified by {@link #id()}, shown under
 * {@link #name()}, spent per key by {@code cost} tokens a request. Immutable and thread-safe.
 */
public final class RateLimitPolicy {

	private final String id;

	private final String name;

	/** The limits in force, shared by every copy of this policy (other costs, shadow), changeable at run time. */
	private final PolicyLimits limits;

	/** The limit this copy decides with: the policy's own, or a plan's for one request ({@link #inForceFor}). */
	private final @Nullable Limit limit;

	private final @Nullable RequestValue planResolver;

	private final @Nullable RequestCondition exemptWhen;

	private final String keySpec;

	private final RequestValue keyResolver;

	private final long cost;

	private final long maxDelayNanos;

	private final CountMode count;

	private final boolean shadow;

	/** Whether the key, plan or exemption may read the request's parameters ({@link KeyResolvers#readsParameters}). */
	private final boolean readsParameters;

	private final String headerName;

	/** {@link #headerName} followed by {@code ;r=}: where this policy's item of the {@code RateLimit} header starts. */
	private final String stateItemPrefix;

	/** This policy in shadow mode, once asked for. */
	private volatile @Nullable RateLimitPolicy inShadow;

	/** The {@code RateLimit-Policy} item last written, with the limit it was written for. */
	private volatile @Nullable PolicyItem policyItem;

	private RateLimitPolicy(String id, String name, PolicyLimits limits, @Nullable Limit limit,
			@Nullable RequestValue planResolver, @Nullable RequestCondition exemptWhen, String keySpec,
			RequestValue keyResolver, long cost, long maxDelayNanos, CountMode count, boolean shadow,
			boolean readsParameters) {
		this.id = id;
		this.name = name;
		this.limits = limits;
		this.limit = limit;
		this.planResolver = planResolver;
		this.exemptWhen = exemptWhen;
		this.keySpec = keySpec;
		this.keyResolver = keyResolver;
		this.cost = cost;
		this.maxDelayNanos = maxDelayNanos;
		this.count = count;
		this.shadow = shadow;
		this.readsParameters = readsParameters;
		// What the headers say of this policy changes only with its limit: written once per limit, not per response.
		this.headerName = sfString(name);
		this.stateItemPrefix = this.headerName + ";r=";
	}

	/**
	 * Defines a policy from configured values, validating each.
	 * @param definition the values and where they come from
	 * @param keyResolvers builds the key resolver
	 * @return the policy
	 * @throws RateLimitConfigurationException naming the bad value's origin
	 */
	static RateLimitPolicy define(PolicyDefinition definition, KeyResolvers keyResolvers) {
		Limit limit = definition.toLimit();
		long maxDelayNanos = definition.validate(limit);
		long cost = definition.cost();
		RequestValue keyResolver = keyResolvers.forSpec(definition.key(), definition.origin("key"));
		PolicyLimits limits = new PolicyLimits(definition, limit, cost);
		return new RateLimitPolicy(definition.id(), definition.name(), limits, null, null, null,
				definition.key().trim(), keyResolver, cost, maxDelayNanos, definition.count(), definition.shadow(),
				KeyResolvers.readsParameters(definition.key()));
	}

	/**
	 * Returns this policy with another cost per request (same budget).
	 * @param cost tokens per request
	 * @param origin where the cost comes from, for the error message
	 * @return the policy
	 */
	RateLimitPolicy withCost(long cost, String origin) {
		long burst = this.limits.smallestBurst();
		if (cost <= 0 || cost > burst) {
			throw new RateLimitConfigurationException(origin, "cost must be between 1 and the burst (" + burst
					+ ") of policy '" + this.name + "'" + (this.limits.hasPlans() ? " and of each of its plans" : "")
					+ ", was " + cost, "Lower the cost or raise the burst");
		}
		if (cost == this.cost) {
			return this;
		}
		this.limits.costs(cost);
		return new RateLimitPolicy(this.id, this.name, this.limits, this.limit, this.planResolver, this.exemptWhen,
				this.keySpec, this.keyResolver, cost, this.maxDelayNanos, this.count, this.shadow, this.readsParameters);
	}

	/**
	 * Returns this policy with plans: a request's plan name, resolved from {@code planSpec} (the syntax
	 * of keys: {@code header:}, {@code param:}, {@code #{...}}, {@code @bean}), picks the limit, period
	 * and burst it is judged by; a request with no plan or an unknown one gets the policy's own. Every
	 * plan's values are checked as the policy's are, and the cost against every plan's burst.
	 * @param planSpec where the plan name comes from
	 * @param plans the plans, by name
	 * @param keyResolvers builds the plan resolver
	 * @param originPrefix the policy's property prefix, e.g. {@code rate-limit.policies.api}
	 * @return the policy
	 * @throws RateLimitConfigurationException naming the bad value's property
	 */
	RateLimitPolicy withPlans(String planSpec, Map<String, Plan> plans, KeyResolvers keyResolvers,
			String originPrefix) {
		RequestValue planResolver = keyResolvers.forPlanSpec(planSpec, originPrefix + ".plan");
		this.limits.configurePlans(plans);
		return new RateLimitPolicy(this.id, this.name, this.limits, this.limit, planResolver, this.exemptWhen,
				this.keySpec, this.keyResolver, this.cost, this.maxDelayNanos, this.count, this.shadow,
				this.readsParameters || KeyResolvers.readsParameters(planSpec));
	}

	/**
	 * Returns this policy with an exemption: a request for which the SpEL boolean {@code condition}
	 * (over the root of key expressions) is true is not limited by this policy. An expression that
	 * throws refuses the request ({@link #isExempt}).
	 * @param condition the expression, e.g. {@code user == 'monitor'}
	 * @param keyResolvers parses it
	 * @param origin the property, for error messages
	 * @return the policy
	 * @throws RateLimitConfigurationException when the expression does not parse
	 */
	RateLimitPolicy withExemption(String condition, KeyResolvers keyResolvers, String origin) {
		RequestCondition exemptWhen = keyResolvers.condition(condition, origin);
		return new RateLimitPolicy(this.id, this.name, this.limits, this.limit, this.planResolver, exemptWhen,
				this.keySpec, this.keyResolver, this.cost, this.maxDelayNanos, this.count, this.shadow,
				this.readsParameters || KeyResolvers.readsParameters(condition));
	}

	/**
	 * Slows this policy's requests down once part of a key's budget is spent (shared by every copy of the
	 * policy), validated against the burst of the policy and of each of its plans.
	 * @param slowDown the values
	 * @param prefix the property prefix of the values, e.g. {@code rate-limit.policies.login.slow-down}
	 * @return this policy
	 * @throws RateLimitConfigurationException naming the bad value's property
	 */
	RateLimitPolicy withSlowDown(SlowDown slowDown, String prefix) {
		this.limits.slowDown(slowDown, prefix);
		return this;
	}

	/**
	 * Bans a key that keeps running into this policy's limit (shared by every copy of the policy but its
	 * shadow ones, which never change a response).
	 * @param settings the values
	 * @param prefix the property prefix of the values, e.g. {@code rate-limit.policies.login.ban}
	 * @return this policy
	 * @throws RateLimitConfigurationException naming the bad value's property
	 */
	RateLimitPolicy withBan(BanSettings settings, String prefix) {
		this.limits.ban(settings, prefix);
		return this;
	}

	/**
	 * Returns how this policy slows requests down.
	 * @return the values, {@code null} when it does not
	 */
	public @Nullable SlowDown slowDown() {
		return this.limits.slowDownSettings();
	}

	/**
	 * Returns how this policy bans keys.
	 * @return the ban, {@code null} when it bans nobody
	 */
	public @Nullable Ban ban() {
		return this.limits.ban();
	}

	/**
	 * Returns how long a request this policy allowed waits before it proceeds ({@code slow-down}), from the
	 * key's state its decision reports, attempts in flight included: the units spent before this request
	 * are {@code burst - remaining - cost}.
	 * @param receipt what the store took for the request
	 * @return nanoseconds; 0 when the request proceeds at once, was rejected or holds nothing (a store
	 * that could not decide)
	 */
	public long slowDownNanos(Receipt receipt) {
		if (slowDown() == null || !receipt.holdsCost()) {
			return 0;
		}
		return this.limits.slowDownNanos(limit().burst() - receipt.decision().remaining() - this.cost);
	}

	/**
	 * Returns whether this policy slows requests down ({@code slow-down}).
	 * @return {@code true} when it does
	 */
	public boolean slowsDown() {
		return slowDown() != null;
	}

	/**
	 * Returns whether a request is exempt from this policy ({@code exempt-when}).
	 * @param request the request
	 * @return {@code true} when the policy's exemption holds for it
	 * @throws UnreadableRequestException when the expression throws (a shadow policy takes it as not exempt)
	 */
	public boolean isExempt(LimitedRequest request) {
		try {
			return this.exemptWhen != null && this.exemptWhen.test(request);
		}
		catch (UnreadableRequestException ex) {
			return fallBack(request, ex, false);
		}
	}

	/**
	 * What an enforced policy cannot tell refuses the request; a shadow policy, which never changes a
	 * response, takes what it took before (not exempt, its own limit, the client IP's key) and the
	 * request is counted as {@code shadow-unreadable}.
	 */
	private <T> T fallBack(LimitedRequest request, UnreadableRequestException ex, T fallback) {
		if (!this.shadow) {
			throw ex.of(this.name);
		}
		request.fellBack(this.name);
		return fallback;
	}

	/**
	 * Returns whether this policy's key, plan or exemption may read the request's parameters, which
	 * are then read before any of them ({@link LimitedRequest#unreadableParameters}).
	 * @return {@code true} for a {@code param:} source, a SpEL expression that reads parameters or the
	 * request, or a resolver bean
	 */
	public boolean readsParameters() {
		return this.readsParameters;
	}

	/**
	 * Starts what this policy's key and plan await for a request (the answers of
	 * {@link io.github.ratelimit.web.AsyncRequestKeyResolver}s), so that deciding it then waits for nothing.
	 * @param request the request
	 * @return completed once they answered (exceptionally when one failed: reading it then refuses the request)
	 */
	public CompletableFuture<?> fetch(LimitedRequest request) {
		CompletableFuture<?> key = this.keyResolver.fetch(request);
		return (this.planResolver == null) ? key : CompletableFuture.allOf(key, this.planResolver.fetch(request));
	}

	/**
	 * Returns this policy as it judges one request: with the limit of the request's plan when it has
	 * one (same budget, same name), else as it is.
	 * @param request the request
	 * @return the policy to decide the request with
	 * @throws UnreadableRequestException when the plan cannot be told (a shadow policy takes its own limit)
	 */
	public RateLimitPolicy inForceFor(LimitedRequest request) {
		Map<String, Limit> plans = this.limits.inForce().plans();
		if (this.planResolver == null || plans.isEmpty()) {
			return this;
		}
		String plan;
		try {
			plan = this.planResolver.read(request);
		}
		catch (UnreadableRequestException ex) {
			// A plan that cannot be told refuses the request: the policy's own limit would let the client choose.
			return fallBack(request, ex, this);
		}
		Limit planned = (plan != null) ? plans.get(plan.trim()) : null;
		if (planned == null) {
			return this;
		}
		return new RateLimitPolicy(this.id, this.name, this.limits, planned, this.planResolver, this.exemptWhen,
				this.keySpec, this.keyResolver, this.cost, this.maxDelayNanos, this.count, this.shadow, this.readsParameters);
	}

	/**
	 * Returns whether the values in force were changed at run time.
	 * @return {@code true} after a {@link RateLimitPolicies#change}, until {@link RateLimitPolicies#restore}
	 */
	public boolean isOverridden() {
		return this.limits.isOverridden();
	}

	/**
	 * Returns the plans' limits in force.
	 * @return the limits by plan name; empty without plans
	 */
	public Map<String, Limit> plans() {
		return this.limits.inForce().plans();
	}

	/**
	 * Returns the limits in force and what was configured, shared by every copy of this policy.
	 * @return the limits
	 */
	PolicyLimits limits() {
		return this.limits;
	}

	/**
	 * Returns this policy in shadow mode: decided, counted and logged, never enforced.
	 * @return the policy
	 */
	public RateLimitPolicy inShadow() {
		if (this.shadow) {
			return this;
		}
		// rate-limit.mode: shadow asks for it on every request.
		RateLimitPolicy shadowed = this.inShadow;
		if (shadowed == null) {
			shadowed = new RateLimitPolicy(this.id, this.name, this.limits, this.limit, this.planResolver,
					this.exemptWhen, this.keySpec, this.keyResolver, this.cost, this.maxDelayNanos, this.count, true,
					this.readsParameters);
			this.inShadow = shadowed;
		}
		return shadowed;
	}

	/**
	 * Builds this policy's part of a request.
	 * @param request the request
	 * @return which budget it spends, and how much
	 * @throws UnreadableRequestException when the key cannot be read (a shadow policy takes the client IP's)
	 */
	public Acquisition acquisition(LimitedRequest request) {
		String key;
		try {
			key = this.keyResolver.read(request);
		}
		catch (UnreadableRequestException ex) {
			String fallback = ex.fallbackKey();
			if (fallback == null) {
				throw ex.of(this.name);
			}
			key = fallBack(request, ex, fallback);
		}
		return new Acquisition(this.id, limit(), key, this.cost, this.maxDelayNanos, this.shadow ? null : this.limits.ban());
	}

	/**
	 * Builds an acquisition of one unit of a key's budget, as a request of this policy would make it: to read
	 * the key's state (the actuator).
	 * @param key the key as stored, e.g. {@code param:alice}
	 * @return the acquisition, with the policy's ban
	 */
	public Acquisition acquisitionOf(String key) {
		return new Acquisition(this.id, limit(), key, 1, 0, this.shadow ? null : this.limits.ban());
	}

	/**
	 * Returns the identity of the budget: a policy name, or an annotated endpoint.
	 * @return the id
	 */
	public String id() {
		return this.id;
	}

	/**
	 * Returns the name shown in headers and problem responses.
	 * @return the name
	 */
	public String name() {
		return this.name;
	}

	/**
	 * Returns the budget's limit: the policy's own in force (see {@link #inForceFor} for a request's plan).
	 * @return the limit
	 */
	public Limit limit() {
		return (this.limit != null) ? this.limit : this.limits.inForce().limit();
	}

	/**
	 * Returns the key setting, e.g. {@code ip}.
	 * @return the key setting
	 */
	public String keySpec() {
		return this.keySpec;
	}

	/**
	 * Returns the tokens a request takes.
	 * @return the cost
	 */
	public long cost() {
		return this.cost;
	}

	/**
	 * Returns how long a request may wait for its turn; zero rejects at once.
	 * @return nanoseconds
	 */
	public long maxDelayNanos() {
		return this.maxDelayNanos;
	}

	/**
	 * Returns whether the policy limits requests in flight ({@code algorithm: concurrency}): its slots
	 * are held until the response is complete.
	 * @return {@code true} for a concurrency limit
	 */
	public boolean isConcurrency() {
		return !limit().algorithm().isRate();
	}

	/**
	 * Returns which requests spend the budget.
	 * @return all, failures or successes
	 */
	public CountMode count() {
		return this.count;
	}

	/**
	 * Returns whether the policy only observes (shadow mode).
	 * @return {@code true} when it never rejects nor delays
	 */
	public boolean shadow() {
		return this.shadow;
	}

	/**
	 * This policy's item of the {@code RateLimit-Policy} header, e.g. {@code "api";q=100;w=60}, or
	 * {@code "uploads";q=2;qu="concurrent-requests"} for a concurrency limit.
	 */
	public String policyItem() {
		return policyItem(limit()).text();
	}

	/**
	 * The text of a decision's limit for the headers ({@code X-RateLimit-Limit}): the policy's limit in
	 * force is written once, not per response.
	 * @param value the limit a decision reports
	 */
	public String limitText(long value) {
		PolicyItem item = policyItem(limit());
		return (item.limit().limit() == value) ? item.limitText() : Long.toString(value);
	}

	/** The start of this policy's item of the {@code RateLimit} header: {@code "api";r=}. */
	public String stateItemPrefix() {
		return this.stateItemPrefix;
	}

	private PolicyItem policyItem(Limit limit) {
		PolicyItem item = this.policyItem;
		if (item == null || item.limit() != limit) {
			// A concurrency limit has no window: its quota unit says what q counts (draft-ietf-httpapi-ratelimit-headers).
			item = new PolicyItem(limit, this.headerName + ";q=" + limit.limit() + (limit.algorithm().isRate()
					? ";w=" + wholeSeconds(limit.period()) : ";qu=\"concurrent-requests\""),
					Long.toString(limit.limit()));
			this.policyItem = item;
		}
		return item;
	}

	private record PolicyItem(Limit limit, String text, String limitText) {
	}

	@Override
	public String toString() {
		return "'" + this.name + "' " + limit() + " key=" + this.keySpec + " cost=" + this.cost
				+ ((this.maxDelayNanos > 0) ? " max-delay=" + Duration.ofNanos(this.maxDelayNanos) : "")
				+ ((this.count != CountMode.ALL) ? " count=" + this.count : "") + (this.shadow ? " shadow" : "");
	}

	/**
	 * A plan's values, before validation: each unset one comes from the policy (a burst the policy does
	 * not set defaults to the plan's limit). Bound from {@code rate-limit.policies.<name>.plans.<plan>}.
	 *
	 * @param limit Requests (tokens) allowed per period under this plan; the policy's when unset.
	 * @param period Period of this plan's limit; the policy's when unset.
	 * @param burst Bucket capacity under this plan; the policy's burst when set there, else this plan's limit.
	 */
	public record Plan(@Nullable Long limit, @Nullable Duration period, @Nullable Long burst) {
	}

	/**
	 * Slowing requests down before a key is locked out: once {@code after} units of its budget are spent, a
	 * request waits {@code delay}, doubling with each further unit spent, at most {@code maxDelay}. Bound
	 * from {@code rate-limit.policies.<name>.slow-down}.
	 *
	 * @param after Units of the budget spent before requests are delayed; below the burst (of every plan).
	 * @param delay The delay once 'after' units are spent, doubling with each further unit spent.
	 * @param maxDelay The longest delay; at the burst a request gets its 429 at once, never delayed.
	 */
	public record SlowDown(@Nullable Long after, @Nullable Duration delay, @Nullable Duration maxDelay) {
	}

	/**
	 * Banning a key that keeps running into the limit. Bound from {@code rate-limit.policies.<name>.ban}.
	 *
	 * @param after Lockout answers (429s of this policy because the key's budget was spent) that ban the key;
	 * at least 1.
	 * @param within How long after the first of them they count; the policy's period when unset.
	 * @param duration How long the key is banned: every request of it is refused at once, its budget not asked.
	 */
	public record BanSettings(@Nullable Long after, @Nullable Duration within, @Nullable Duration duration) {
	}

	/**
	 * A change of a policy's values at run time; {@code null} values keep what they are.
	 *
	 * @param limit the quota per period
	 * @param period the period
	 * @param burst the capacity
	 * @param plans the plans, replacing the plans in force
	 */
	public record Change(@Nullable Long limit, @Nullable Duration period, @Nullable Long burst,
			@Nullable Map<String, Plan> plans) {
	}

	/**
	 * Quotes a name as a Structured Field string (RFC 9651): printable ASCII only, with {@code "} and
	 * {@code \} escaped; other characters become {@code ?}.
	 */
	static String sfString(String name) {
		StringBuilder quoted = new StringBuilder(name.length() + 2).append('"');
		for (int i = 0; i < name.length(); i++) {
			char c = name.charAt(i);
			if (c == '"' || c == '\\') {
				quoted.append('\\').append(c);
			}
			else if (c >= 0x20 && c <= 0x7E) {
				quoted.append(c);
			}
			else {
				quoted.append('?');
			}
		}
		return quoted.append('"').toString();
	}

	/** A window's whole seconds, rounded up. */
	private static long wholeSeconds(Duration period) {
		return -Math.floorDiv(-period.toNanos(), 1_000_000_000L);
	}

}
