package io.github.ratelimit.redis;

/**
 * What the Redis store decides when Redis cannot answer in time (down, unreachable, slow, or its
 * breaker is open).
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
	 * effective budget is multiplied by the number of instances while Redis is away.
	 */
	LOCAL

}
