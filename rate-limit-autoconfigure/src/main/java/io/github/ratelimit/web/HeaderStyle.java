package io.github.ratelimit.web;

/**
 * Which rate limit headers responses carry; {@code rate-limit.headers.style} takes one or a list (e.g.
 * {@code [legacy, draft-6]}). {@code Retry-After} is sent on every rejection whatever the style.
 */
public enum HeaderStyle {

	/** Both {@link #LEGACY} and {@link #IETF}. */
	BOTH,

	/** {@code X-RateLimit-Limit}, {@code X-RateLimit-Remaining}, {@code X-RateLimit-Reset}. */
	LEGACY,

	/**
	 * {@code RateLimit-Policy} and {@code RateLimit}, one list item per limit
	 * (draft-ietf-httpapi-ratelimit-headers 10/11).
	 */
	IETF,

	/**
	 * {@code RateLimit-Limit}, {@code RateLimit-Remaining}, {@code RateLimit-Reset} (delta seconds) of the
	 * most restrictive limit, as draft-ietf-httpapi-ratelimit-headers-06 defined them and many clients
	 * still read them.
	 */
	DRAFT_6,

	/** No rate limit headers. */
	NONE
}
