package io.github.ratelimit.web;

import java.util.List;

import io.github.ratelimit.core.Decision;

/**
 * What the limits that apply to one request decided, as a {@link RateLimitRejectionHandler} is told:
 * one {@link Decision} per policy. The request is allowed only when every policy allows it. Read-only;
 * the limiter's results are immutable and thread-safe.
 */
public interface RateLimitResult {

	/**
	 * Returns whether every policy allowed the request.
	 * @return {@code true} when allowed
	 */
	boolean isAllowed();

	/**
	 * Returns the names of the policies that applied.
	 * @return the names, in the order of {@link #decisions()}
	 */
	List<String> policyNames();

	/**
	 * Returns the decisions, in the order of {@link #policyNames()}.
	 * @return the decisions
	 */
	List<Decision> decisions();

	/**
	 * Returns the names of the policies that rejected the request.
	 * @return the names; empty when allowed
	 */
	List<String> violatedPolicies();

	/**
	 * Returns the names of the violated policies that refused the request because its key is banned
	 * ({@code ban}): for them, {@link #retryAfterSeconds()} is the rest of the ban.
	 * @return the names; empty by default, and when no ban applies
	 */
	default List<String> bannedPolicies() {
		return List.of();
	}

	/**
	 * Returns how long the client should wait before the same request is allowed: whole seconds,
	 * rounded up, at least 1, and never earlier than the {@code t} (the time until additional quota)
	 * of a violated policy.
	 * @return seconds; 0 when allowed
	 */
	long retryAfterSeconds();
}
