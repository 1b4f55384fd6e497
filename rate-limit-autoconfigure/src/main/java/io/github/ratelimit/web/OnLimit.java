package io.github.ratelimit.web;

/**
 * What happens to a request that exceeds its limit.
 */
public enum OnLimit {

	/** Rejected at once with {@code 429 Too Many Requests}. */
	REJECT,

	/**
	 * Held until its turn when that comes within the policy's {@code max-delay} (the token bucket
	 * reserves the missing tokens, the leaky bucket queues every request at its drain rate); rejected
	 * at once, without waiting, when it would come later.
	 */
	DELAY
}
