package io.github.ratelimit.web.policy;

import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.Ban;
import io.github.ratelimit.core.Limit;
import io.github.ratelimit.core.RateLimitConfigurationException;
import io.github.ratelimit.web.OnLimit;

/**
 * The limits of one policy: its own and its plans', as configured and as in force. Shared by every
 * copy of the policy (with another cost, in shadow, for one request's plan), so that what is in force
 * is the same wherever the policy applies. Every change is validated as start-up validates. Thread-safe:
 * what is in force is one immutable snapshot, replaced at once.
 */
final class PolicyLimits {

	/** The configured values: from start-up, or from a refresh of the configuration. */
	private volatile PolicyDefinition definition;

	private final AtomicLong highestCost;

	private volatile Map<String, RateLimitPolicy.Plan> configuredPlans = Map.of();

	/** Whether the policy has a plan source ({@code plan}): without one, no request is judged by a plan. */
	private volatile boolean planned;

	private volatile InForce configured;

	private volatile InForce inForce;

	/** The values changed at run time, merged over every change since start-up or the last restore. */
	private volatile RateLimitPolicy.@Nullable Change change;

	/** Slowing requests down once part of the budget is spent (validated), or {@code null}. */
	private volatile RateLimitPolicy.@Nullable SlowDown slowDown;

	/** When a key that keeps running into the limit is banned, or {@code null}. */
	private volatile @Nullable Ban ban;

	PolicyLimits(PolicyDefinition definition, Limit limit, long cost) {
		this.definition = definition;
		this.highestCost = new AtomicLong(cost);
		this.configured = new InForce(limit, Map.of());
		this.inForce = this.configured;
	}

	/**
	 * What decides now: the policy's limit and its plans' limits.
	 *
	 * @param limit the policy's own limit, for requests with no plan or an unknown one
	 * @param plans the plans' limits, by name
	 */
	record InForce(Limit limit, Map<String, Limit> plans) {

		/** For logs, e.g. {@code token-bucket(limit=2, period=PT1M, burst=2) plans={pro=...}}. */
		@Override
		public String toString() {
			return this.limit + (this.plans.isEmpty() ? "" : " plans=" + this.plans);
		}

	}

	InForce inForce() {
		return this.inForce;
	}

	InForce configured() {
		return this.configured;
	}

	boolean hasPlans() {
		return !this.inForce.plans().isEmpty();
	}

	/** The smallest burst in force, of the policy and of its plans: the most a request may cost. */
	long smallestBurst() {
		InForce current = this.inForce;
		return current.plans().values().stream().mapToLong(Limit::burst).reduce(current.limit().burst(), Math::min);
	}

	/** Records a cost some use of the policy takes (checked by {@code withCost}), for later checks. */
	void costs(long cost) {
		this.highestCost.accumulateAndGet(cost, Math::max);
	}

	/**
	 * Sets the configured plans, each validated as the policy is ({@code <prefix>.plans.<name>.limit}...),
	 * and the costs against every plan's burst.
	 */
	void configurePlans(Map<String, RateLimitPolicy.Plan> plans) {
		this.planned = true;
		InForce planned = new InForce(this.configured.limit(), plans(this.definition, plans));
		this.configuredPlans = Collections.unmodifiableMap(new LinkedHashMap<>(plans));
		this.configured = planned;
		this.inForce = planned;
	}

	boolean isOverridden() {
		return this.change != null;
	}

	RateLimitPolicy.@Nullable Change change() {
		return this.change;
	}

	/** The change in force with the values {@code requested} sets replacing those of earlier changes. */
	RateLimitPolicy.Change merged(RateLimitPolicy.Change requested) {
		RateLimitPolicy.Change previous = this.change;
		return (previous == null) ? requested : new RateLimitPolicy.Change(
				(requested.limit() != null) ? requested.limit() : previous.limit(),
				(requested.period() != null) ? requested.period() : previous.period(),
				(requested.burst() != null) ? requested.burst() : previous.burst(),
				(requested.plans() != null) ? requested.plans() : previous.plans());
	}

	/**
	 * Puts a whole change in force (over the configured values, not merged with earlier changes), or
	 * returns to the configured values for {@code null}; validated as at start-up.
	 * @return what was in force before
	 * @throws RateLimitConfigurationException naming the bad value's property; nothing changed then
	 */
	synchronized InForce replace(RateLimitPolicy.@Nullable Change change) {
		InForce next = (change != null) ? resolve(this.definition, this.configuredPlans, change) : this.configured;
		InForce before = this.inForce;
		this.inForce = next;
		this.change = change;
		return before;
	}

	/**
	 * Takes new configured values (a refreshed configuration): validated as at start-up, and the change
	 * made at run time, if any, applied over them.
	 * @return what was in force before
	 * @throws RateLimitConfigurationException naming the bad value's property; nothing changed then
	 */
	synchronized InForce reconfigure(@Nullable Long limit, @Nullable Duration period, @Nullable Long burst,
			Map<String, RateLimitPolicy.Plan> plans) {
		PolicyDefinition old = this.definition;
		PolicyDefinition base = new PolicyDefinition(old.id(), old.name(), old.originPrefix(),
				old.annotation(), old.algorithm(), limit, period, burst, old.key(), old.cost(), old.onLimit(),
				old.maxDelay(), old.count(), old.shadow());
		InForce configured = resolve(base, plans, new RateLimitPolicy.Change(null, null, null, null));
		InForce next = (this.change != null) ? resolve(base, plans, this.change) : configured;
		InForce before = this.inForce;
		this.definition = base;
		this.configuredPlans = Collections.unmodifiableMap(new LinkedHashMap<>(plans));
		this.configured = configured;
		this.inForce = next;
		return before;
	}

	/** Validates and builds the limits of {@code change} over the configured values {@code base}. */
	private InForce resolve(PolicyDefinition base, Map<String, RateLimitPolicy.Plan> basePlans,
			RateLimitPolicy.Change change) {
		PolicyDefinition changed = base.with(base.originPrefix(), change.limit(), change.period(), change.burst());
		Limit limit = changed.toLimit();
		checkBurst(limit, base.originPrefix(), "the burst (" + limit.burst() + ") would be", "Raise the burst or the limit");
		Map<String, Limit> plans = plans(changed, (change.plans() != null) ? change.plans() : basePlans);
		return new InForce(limit, plans);
	}

	/** Validates and builds the plans' limits, over the policy's values of {@code base}. */
	Map<String, Limit> plans(PolicyDefinition base, Map<String, RateLimitPolicy.Plan> plans) {
		if (!plans.isEmpty() && !this.planned) {
			// As start-up refuses plans without a source: they would be shown, and never judge a request.
			throw new RateLimitConfigurationException(base.originPrefix() + ".plans",
					"plans are given but the policy has no plan source (" + base.originPrefix()
							+ ".plan), so no request would ever be judged by them",
					"Leave plans out, or set " + base.originPrefix() + ".plan (it applies at the next start)");
		}
		Map<String, Limit> limits = new LinkedHashMap<>();
		plans.forEach((name, plan) -> {
			String prefix = base.originPrefix() + ".plans." + name;
			if (name == null || name.isBlank()) {
				throw new RateLimitConfigurationException(prefix, "a plan needs a name", "Name the plan, e.g. pro");
			}
			PolicyDefinition definition = base.with(prefix, plan.limit(), plan.period(), plan.burst());
			Limit limit = definition.toLimit();
			checkBurst(limit, prefix, "the burst of plan '" + name + "' (" + limit.burst() + ") is",
					"Raise the plan's burst or limit, or lower the cost");
			limits.put(name.trim(), limit);
		});
		return Collections.unmodifiableMap(limits);
	}

	/**
	 * Checks a burst, the policy's or a plan's, against what depends on it: the cost of a request, and the
	 * units spent before requests are slowed down, which must leave units to slow down before the lockout.
	 * @param prefix the property prefix of the policy or plan ({@code .burst} is named)
	 * @param burstIs how the failure starts, naming the burst, e.g. {@code the burst (4) would be}
	 * @param action what a burst below the cost says to do
	 */
	private void checkBurst(Limit limit, String prefix, String burstIs, String action) {
		long cost = this.highestCost.get();
		if (cost > limit.burst()) {
			throw new RateLimitConfigurationException(prefix + ".burst",
					burstIs + " below the cost of a request (" + cost + ")", action);
		}
		RateLimitPolicy.SlowDown slowDown = this.slowDown;
		if (slowDown != null && slowDown.after() >= limit.burst()) {
			throw new RateLimitConfigurationException(prefix + ".burst",
					burstIs + " no more than slow-down.after (" + slowDown.after()
							+ "): a key would be locked out before any request of it is slowed down",
					"Raise the burst, or lower slow-down.after");
		}
	}

	/**
	 * Slows requests down once {@code after} units of the budget are spent: validated here, against the
	 * burst of the policy and of each plan in force.
	 * @param prefix the property prefix of the slow-down, e.g. {@code rate-limit.policies.login.slow-down}
	 * @throws RateLimitConfigurationException naming the bad value's property
	 */
	synchronized void slowDown(RateLimitPolicy.SlowDown slowDown, String prefix) {
		if (this.definition.algorithm() == Algorithm.CONCURRENCY) {
			throw new RateLimitConfigurationException(prefix, "slow-down does not apply to algorithm: concurrency, "
					+ "which limits requests in flight, not a budget spent over time",
					"Remove slow-down, or use a rate algorithm such as token-bucket");
		}
		if (this.definition.onLimit() == OnLimit.DELAY) {
			throw new RateLimitConfigurationException(prefix, "slow-down cannot go with on-limit: delay: one policy "
					+ "either waits for its turn or slows down", "Remove slow-down, or set on-limit: reject");
		}
		Long after = slowDown.after();
		if (after == null || after < 0) {
			throw new RateLimitConfigurationException(prefix + ".after",
					(after == null) ? "no after is set" : "after must not be negative, was " + after,
					"Set how many units of the budget are spent before requests are delayed, e.g. 2");
		}
		Duration delay = slowDown.delay();
		if (delay == null || delay.isNegative() || delay.isZero()) {
			throw new RateLimitConfigurationException(prefix + ".delay",
					(delay == null) ? "no delay is set" : "delay must be positive, was " + delay, "Set the first delay, e.g. 1s");
		}
		Duration maxDelay = slowDown.maxDelay();
		if (maxDelay == null || maxDelay.compareTo(delay) < 0 || maxDelay.compareTo(Duration.ofDays(365 * 100L)) > 0) {
			throw new RateLimitConfigurationException(prefix + ".max-delay", (maxDelay == null) ? "no max-delay is set"
					: (maxDelay.compareTo(delay) < 0) ? "max-delay (" + maxDelay + ") is below delay (" + delay + ")"
							: "max-delay must be at most 100 years, was " + maxDelay,
					"Set the longest delay, at least delay, e.g. 8s");
		}
		RateLimitPolicy.SlowDown valid = new RateLimitPolicy.SlowDown(after, delay, maxDelay);
		long smallest = smallestBurst();
		if (valid.after() >= smallest) {
			throw new RateLimitConfigurationException(prefix + ".after",
					"after (" + valid.after() + ") must be below the burst (" + smallest + ")"
							+ (hasPlans() ? " of the policy and of each of its plans" : "")
							+ ": at the burst a key is locked out, never slowed down",
					"Lower after, or raise the burst");
		}
		this.slowDown = valid;
	}

	/**
	 * How long a request waits that finds {@code spent} units of its budget spent before it: nothing before
	 * {@code after} units, then {@code delay}, doubling with each further unit, at most {@code max-delay}.
	 * @return nanoseconds; 0 without slow-down
	 */
	long slowDownNanos(long spent) {
		RateLimitPolicy.SlowDown slowDown = this.slowDown;
		if (slowDown == null || spent < slowDown.after()) {
			return 0;
		}
		long delay = slowDown.delay().toNanos();
		long max = slowDown.maxDelay().toNanos();
		long doublings = spent - slowDown.after();
		return (doublings >= Long.SIZE - 1 || delay > (max >> doublings)) ? max : delay << doublings;
	}

	RateLimitPolicy.@Nullable SlowDown slowDownSettings() {
		return this.slowDown;
	}

	/**
	 * Bans a key that keeps running into the policy's limit, validated here.
	 * @param prefix the property prefix of the values, e.g. {@code rate-limit.policies.login.ban}
	 * @throws RateLimitConfigurationException naming the bad value's property
	 */
	synchronized void ban(RateLimitPolicy.BanSettings settings, String prefix) {
		if (this.definition.algorithm() == Algorithm.CONCURRENCY) {
			throw new RateLimitConfigurationException(prefix, "ban does not apply to algorithm: concurrency, whose "
					+ "requests are refused only while others of the key are in flight",
					"Remove ban, or use a rate algorithm such as token-bucket");
		}
		Long after = settings.after();
		if (after == null || after < 1) {
			throw new RateLimitConfigurationException(prefix + ".after",
					(after == null) ? "no after is set" : "after must be at least 1, was " + after,
					"Set how many lockout answers ban a key, e.g. 3");
		}
		Duration within = (settings.within() != null) ? settings.within() : this.definition.period();
		this.ban = new Ban(after, positive(within, prefix + ".within", "e.g. 1h (the default is the policy's period)"),
				positive(settings.duration(), prefix + ".duration", "e.g. 24h"));
	}

	private static long positive(@Nullable Duration duration, String property, String example) {
		if (duration == null || duration.isNegative() || duration.isZero()
				|| duration.compareTo(Duration.ofDays(365 * 100L)) > 0) {
			throw new RateLimitConfigurationException(property,
					(duration == null) ? "no " + property.substring(property.lastIndexOf('.') + 1) + " is set"
							: "it must be positive and at most 100 years, was " + duration,
					"Set how long, " + example);
		}
		return duration.toNanos();
	}

	/** How a key that keeps running into the limit is banned, or {@code null}. */
	@Nullable Ban ban() {
		return this.ban;
	}
}
