package io.github.ratelimit.web;

import java.util.Locale;

/**
 * What one policy did to one request, as metrics and logs report it.
 */
public enum DecisionOutcome {

	/** Allowed at once. */
	ALLOWED,

	/** Rejected (429). */
	REJECTED,

	/** Allowed after waiting for its turn (delay mode). */
	DELAYED,

	/**
	 * Allowed after a wait, because part of its key's budget was spent ({@code slow-down}); for a shadow
	 * policy, the wait it would have made (it made none).
	 */
	SLOWED,

	/**
	 * Rejected (429) at once because its key is banned ({@code ban}): it kept running into the limit. The
	 * rejection that started the ban is counted so too.
	 */
	BANNED,

	/** A shadow policy would have rejected it; it went through. */
	SHADOW_REJECTED,

	/** The store failed; the request went through (fail open). */
	STORE_ERROR,

	/**
	 * The shared store could not decide (Redis down, slow or its breaker open) and the policy's
	 * {@code on-failure: allow} let the request through, unlimited.
	 */
	FAILED_OPEN,

	/** The shared store could not decide and the policy's {@code on-failure: deny} rejected the request. */
	FAILED_CLOSED,

	/**
	 * The shared store could not decide and the policy's {@code on-failure: local} allowed the request by
	 * this instance's in-process budget.
	 */
	LOCAL_ALLOWED,

	/** The shared store could not decide and this instance's in-process budget rejected the request. */
	LOCAL_REJECTED,

	/** The request is exempt ({@code rate-limit.exempt}, {@code exempt-when}): not limited, nothing spent. */
	EXEMPT,

	/**
	 * The policy could not tell the request's key, plan or exemption (parameters that cannot be decoded, a
	 * key header sent twice, a resolver that threw): refused with {@code 400}, nothing spent.
	 */
	UNREADABLE,

	/**
	 * A shadow policy could not tell the request's key, plan or exemption; it went through, the policy
	 * falling back as if the value were absent (its decision is counted too).
	 */
	SHADOW_UNREADABLE;

	/**
	 * Returns the metric tag value.
	 * @return e.g. {@code shadow-rejected}
	 */
	public String tag() {
		return name().toLowerCase(Locale.ROOT).replace('_', '-');
	}
}
