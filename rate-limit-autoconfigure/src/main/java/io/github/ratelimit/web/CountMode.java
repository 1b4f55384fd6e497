package io.github.ratelimit.web;

/**
 * Which requests spend a budget.
 */
public enum CountMode {

	/** Every request, when it arrives. */
	ALL,

	/**
	 * Only requests whose response is a failure (status 400 or above), counted when the response is
	 * complete: brute-force protection. While the budget is exhausted, requests are rejected up front.
	 */
	FAILURES,

	/** Only requests whose response is a success (status below 400), counted when it is complete. */
	SUCCESSES;

	/**
	 * Returns whether a completed response spends the budget.
	 * @param status the response status
	 * @return {@code true} when it counts
	 */
	public boolean counts(int status) {
		return switch (this) {
			case ALL -> true;
			case FAILURES -> status >= 400;
			case SUCCESSES -> status < 400;
		};
	}
}
