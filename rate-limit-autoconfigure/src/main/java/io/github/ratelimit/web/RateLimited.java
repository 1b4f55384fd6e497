package io.github.ratelimit.web;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Repeatable;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import io.github.ratelimit.core.Algorithm;

/**
 * Limits a handler method, or every handler method of a controller, either by naming a policy from
 * {@code rate-limit.policies} ({@code @RateLimited("login")}) or inline
 * ({@code @RateLimited(limit = 10, period = "1m")}). A named policy's budget is shared by everything
 * that names it; an inline limit's budget belongs to its endpoint alone. Repeatable: every limit
 * that applies must allow the request.
 */
@Target({ ElementType.METHOD, ElementType.TYPE })
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Repeatable(RateLimited.List.class)
public @interface RateLimited {

	/**
	 * The name of a policy under {@code rate-limit.policies}; leave empty for an inline limit.
	 * @return the policy name
	 */
	String value() default "";

	/**
	 * The name an inline limit shows in headers and problem responses; defaults to
	 * {@code ControllerSimpleName.method}.
	 * @return the name
	 */
	String name() default "";

	/**
	 * Inline: requests (tokens) allowed per period.
	 * @return the limit; positive when inline
	 */
	long limit() default 0;

	/**
	 * Inline: the period, as in {@code application.yml} ({@code 1s}, {@code 1m}, {@code PT1H}).
	 * @return the period
	 */
	String period() default "";

	/**
	 * Inline: the most requests allowed at once; defaults to the limit.
	 * @return the burst
	 */
	long burst() default 0;

	/**
	 * Inline: whose budget a request spends ({@code ip} when empty); see the key table in docs/keys-and-client-ip.md.
	 * @return the key
	 */
	String key() default "";

	/**
	 * Inline: the algorithm ({@link Algorithm#TOKEN_BUCKET} by default).
	 * @return the algorithm
	 */
	Algorithm algorithm() default Algorithm.TOKEN_BUCKET;

	/**
	 * Inline: what happens to a request over the limit ({@link OnLimit#REJECT} by default).
	 * @return reject or delay
	 */
	OnLimit onLimit() default OnLimit.REJECT;

	/**
	 * Inline, with {@code onLimit = DELAY}: how long a request may wait for its turn, e.g.
	 * {@code 500ms}.
	 * @return the bound on the wait
	 */
	String maxDelay() default "";

	/**
	 * Inline: which requests spend the budget ({@link CountMode#ALL} by default); {@code FAILURES}
	 * makes a brute-force lockout.
	 * @return the count mode
	 */
	CountMode count() default CountMode.ALL;

	/**
	 * Inline: decide, count and log, but never reject nor delay (shadow mode).
	 * @return whether the limit only observes
	 */
	boolean shadow() default false;

	/**
	 * Tokens one request to this endpoint takes; also allowed with a named policy, to make an
	 * expensive endpoint spend more of a shared budget. Defaults to the policy's cost (inline: 1).
	 * @return the cost
	 */
	long cost() default 0;

	/**
	 * Holds repeated {@link RateLimited} annotations.
	 */
	@Target({ ElementType.METHOD, ElementType.TYPE })
	@Retention(RetentionPolicy.RUNTIME)
	@Documented
	@interface List {

		/**
		 * The annotations.
		 * @return the annotations
		 */
		RateLimited[] value();

	}
}
