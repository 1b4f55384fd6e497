package io.github.ratelimit.core;

/**
 * Thrown at start-up when the rate limit configuration cannot work. Names where the bad value sits
 * (a property or an annotated method), what is wrong, and what to do.
 */
public class RateLimitConfigurationException extends IllegalStateException {

	private final String origin;

	private final String problem;

	private final String action;

	/**
	 * Creates the exception.
	 * @param origin the property (e.g. {@code rate-limit.policies.api.limit}) or the annotated method
	 * @param problem what is wrong
	 * @param action what to do about it
	 */
	public RateLimitConfigurationException(String origin, String problem, String action) {
		super(origin + ": " + problem + (problem.endsWith("?") ? " " : ". ") + action);
		this.origin = origin;
		this.problem = problem;
		this.action = action;
	}

	/**
	 * Returns where the bad value sits.
	 * @return a property name or an annotated method
	 */
	public String getOrigin() {
		return this.origin;
	}

	/**
	 * Returns what is wrong.
	 * @return the problem
	 */
	public String getProblem() {
		return this.problem;
	}

	/**
	 * Returns what to do.
	 * @return the action
	 */
	public String getAction() {
		return this.action;
	}
}
