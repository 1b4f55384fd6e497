package io.github.ratelimit.web.policy;

import java.time.Duration;
import java.util.Locale;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.InvalidValueException;
import io.github.ratelimit.core.Limit;
import io.github.ratelimit.core.RateLimitConfigurationException;
import io.github.ratelimit.web.CountMode;
import io.github.ratelimit.web.OnLimit;

/**
 * Configured values of a policy, before validation.
 *
 * @param id the budget's identity
 * @param name the name shown to clients
 * @param originPrefix where the values come from: a property prefix such as
 * {@code rate-limit.policies.api}, or an annotated method
 * @param annotation whether the values come from {@code @RateLimited} (changes how origins read)
 * @param algorithm the algorithm
 * @param limit the quota per period
 * @param period the period
 * @param burst the capacity
 * @param key the key setting
 * @param cost the tokens a request takes
 * @param onLimit what happens to a request over the limit
 * @param maxDelay how long a request may wait in delay mode
 * @param count which requests spend the budget
 * @param shadow whether the policy only observes
 */
public record PolicyDefinition(String id, String name, String originPrefix, boolean annotation, Algorithm algorithm,
		@Nullable Long limit, @Nullable Duration period, @Nullable Long burst, String key, long cost,
		OnLimit onLimit, Duration maxDelay, CountMode count, boolean shadow) {

	/**
	 * These values with the limit, period and burst that are set replacing the policy's (a plan's, a change's),
	 * from {@code originPrefix}.
	 */
	PolicyDefinition with(String originPrefix, @Nullable Long limit, @Nullable Duration period, @Nullable Long burst) {
		return new PolicyDefinition(this.id, this.name, originPrefix, this.annotation, this.algorithm,
				(limit != null) ? limit : this.limit, (period != null) ? period : this.period,
				(burst != null) ? burst : this.burst, this.key, this.cost, this.onLimit, this.maxDelay, this.count,
				this.shadow);
	}

	String origin(String attribute) {
		String name = this.annotation ? camelCase(attribute) : attribute;
		return this.annotation ? "@RateLimited(" + name + ") on " + this.originPrefix
				: this.originPrefix + "." + attribute;
	}

	private static String camelCase(String attribute) {
		int dash = attribute.indexOf('-');
		return (dash < 0) ? attribute
				: attribute.substring(0, dash) + Character.toUpperCase(attribute.charAt(dash + 1))
						+ attribute.substring(dash + 2);
	}

	/**
	 * Validates and builds the limit of a policy's (or a plan's) values: what start-up and a change at
	 * run time check alike.
	 * @return the limit
	 * @throws RateLimitConfigurationException naming the bad value's origin
	 */
	Limit toLimit() {
		if (limit() == null) {
			throw new RateLimitConfigurationException(origin("limit"), "no limit is set",
					"Set the number of requests allowed per period, e.g. 100");
		}
		if (algorithm == Algorithm.CONCURRENCY) {
			return concurrencyLimit();
		}
		if (period() == null) {
			throw new RateLimitConfigurationException(origin("period"), "no period is set",
					"Set the period the limit refers to, e.g. 1m");
		}
		// Limit's builder is the one home of what a limit, period and burst may be; it names the value.
		try {
			Limit.Builder builder = Limit.builder().algorithm(algorithm).limit(this.limit).period(this.period);
			if (burst() != null) {
				builder.burst(burst());
			}
			return builder.build();
		}
		catch (InvalidValueException ex) {
			throw new RateLimitConfigurationException(origin(ex.name()), ex.getMessage(), ex.action());
		}
	}

	/**
	 * A concurrency limit: requests in flight per key. It has no period and no burst; a plan (or a
	 * change at run time) changes its limit only.
	 */
	private Limit concurrencyLimit() {
		if (period() != null) {
			throw new RateLimitConfigurationException(origin("period"),
					"period does not apply to algorithm: concurrency, which limits requests in flight, not requests "
							+ "per period",
					"Remove period (a plan or a change may set only the limit), or use a rate algorithm such as token-bucket");
		}
		if (burst() != null) {
			throw new RateLimitConfigurationException(origin("burst"),
					"burst does not apply to algorithm: concurrency (the limit is the most requests in flight)",
					"Remove burst");
		}
		long limitValue = limit();
		if (limitValue <= 0 || limitValue > Limit.MAX_CONCURRENCY_LIMIT) {
			throw new RateLimitConfigurationException(origin("limit"),
					"a concurrency limit must be between 1 and " + Limit.MAX_CONCURRENCY_LIMIT
							+ " requests in flight per key, was " + limitValue,
					"Set how many requests of one key may run at once, e.g. 2");
		}
		return Limit.builder().algorithm(Algorithm.CONCURRENCY).limit(limitValue).build();
	}

	/**
	 * Validates how long a request may wait for its turn.
	 * @return nanoseconds; 0 when the policy rejects instead (on-limit: reject)
	 */
	long maxDelayNanos() {
		Duration maxDelay = maxDelay();
		if (maxDelay.isNegative()) {
			throw new RateLimitConfigurationException(origin("max-delay"),
					"max-delay must not be negative, was " + maxDelay, "Set how long a request may wait, e.g. 500ms");
		}
		if (onLimit() == OnLimit.REJECT) {
			if (!maxDelay.isZero()) {
				throw new RateLimitConfigurationException(origin("max-delay"),
						"max-delay is set but on-limit is reject, so no request would ever wait",
						"Set on-limit: delay, or remove max-delay");
			}
			return 0;
		}
		if (!algorithm.canDelay()) {
			throw new RateLimitConfigurationException(origin("on-limit"),
					"on-limit: delay needs an algorithm with a turn to wait for; " + algorithm + " has none",
					"Use token-bucket or leaky-bucket, or on-limit: reject");
		}
		if (maxDelay.isZero()) {
			throw new RateLimitConfigurationException(origin("max-delay"),
					"on-limit: delay needs a positive max-delay", "Set how long a request may wait, e.g. 500ms");
		}
		if (maxDelay.compareTo(Duration.ofDays(365 * 100L)) > 0) {
			// With a period of up to 100 years too, the time a reservation runs to then stays within a long.
			throw new RateLimitConfigurationException(origin("max-delay"),
					"max-delay must be at most 100 years, was " + maxDelay, "Set how long a request may wait, e.g. 500ms");
		}
		return maxDelay.toNanos();
	}

	/**
	 * Validates what the limit does not: the name the headers carry, and what count, on-limit and cost may
	 * go with.
	 * @param limit the policy's limit, validated ({@link #toLimit})
	 * @return how long a request may wait for its turn, in nanoseconds; 0 when the policy rejects at once
	 * @throws RateLimitConfigurationException naming the bad value's origin
	 */
	long validate(Limit limit) {
		if (!name().chars().allMatch((c) -> c >= 0x20 && c <= 0x7E)) {
			// The RateLimit headers carry the name as a structured-field string, printable ASCII only: another
			// character would be sent as '?', so the headers would not name the policy the 429's body names.
			throw new RateLimitConfigurationException(
					annotation() ? origin("name") : originPrefix(),
					"the policy name '" + name() + "' has characters other than printable ASCII, which the "
							+ "RateLimit headers cannot carry",
					"Name it with ASCII letters, digits and punctuation, e.g. transfers");
		}
		if (algorithm == Algorithm.CONCURRENCY && count() != CountMode.ALL) {
			throw new RateLimitConfigurationException(origin("count"),
					"count: " + count().name().toLowerCase(Locale.ROOT) + " cannot go with algorithm: "
							+ "concurrency (a slot is taken when a request arrives, before its response says whether it counts)",
					"Use count: all (the default) for a concurrency limit, or a rate algorithm");
		}
		long maxDelayNanos = maxDelayNanos();
		if (maxDelayNanos > 0 && count() != CountMode.ALL) {
			throw new RateLimitConfigurationException(origin("on-limit"),
					"on-limit: delay cannot go with count: " + count().name().toLowerCase(Locale.ROOT)
							+ " (a request's turn is taken before its response says whether it counts)",
					"Use on-limit: reject, or count: all");
		}
		long cost = cost();
		if (cost <= 0 || cost > limit.burst()) {
			throw new RateLimitConfigurationException(origin("cost"),
					"cost must be between 1 and the burst (" + limit.burst() + "), was " + cost,
					"Lower the cost or raise the burst");
		}
		return maxDelayNanos;
	}
}
