package io.github.ratelimit.web;

/**
 * Which rate limit headers responses carry. {@code Retry-After} is sent on every rejection whatever
 * the style.
 */
public enum HeaderStyle {

	/** Both {@link #LEGACY} and {@link #IETF}. */
	BOTH,

	/** {@code X-RateLimit-Limit}, {@code X-RateLimit-Remaining}, {@code X-RateLimit-Reset}. */
	LEGACY,

	/** {@code RateLimit-Policy} and {@code RateLimit} (draft-ietf-httpapi-ratelimit-headers). */
	IETF,

	/** No rate limit headers. */
	NONE;

	boolean legacy() {
		return this == BOTH || this == LEGACY;
	}

	boolean ietf() {
		return this == BOTH || this == IETF;
	}
}
