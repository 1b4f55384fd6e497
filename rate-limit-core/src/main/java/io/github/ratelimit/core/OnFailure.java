package io.github.ratelimit.core;

/**
 * What a shared store decides when it cannot answer in time (Redis down, unreachable, slow, or its
 * breaker open): for the whole store ({@code rate-limit.store.redis.on-failure}), or for one policy
 * ({@code rate-limit.policies.<name>.on-failure}).
 */
public enum OnFailure {

	/**
	 * Fail open: allow every request. Availability over protection; the default.
	 */
	ALLOW,

	/**
	 * Fail closed: reject every request (429 with a Retry-After of one second). Protection over
	 * availability.
	 */
	DENY,

	/**
	 * Decide per instance, in process: each instance enforces the full limit on its own, so the
	 * effective budget is multiplied by the number of instances while the shared store is away.
	 */
	LOCAL

}
