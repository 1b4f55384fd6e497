package io.github.ratelimit.core;

import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * One limit's part of a request: take {@code cost} tokens from {@code key}'s state under the limit
 * identified by {@code limitId}. Immutable.
 *
 * @param limitId identifies the limit's budget (a policy name, or an annotated endpoint); states of
 * different ids never mix
 * @param limit what the budget allows
 * @param key whose budget, e.g. a client IP
 * @param cost how many tokens; positive and at most the limit's burst
 * @param maxWaitNanos how long the request may wait for its turn (delay mode); 0 rejects at once
 * @param ban when the key is banned for running into its limit again and again, or {@code null} never
 */
public record Acquisition(String limitId, Limit limit, String key, long cost, long maxWaitNanos, @Nullable Ban ban) {

	/**
	 * Creates an acquisition whose key is never banned.
	 * @param limitId identifies the limit's budget
	 * @param limit what the budget allows
	 * @param key whose budget
	 * @param cost how many tokens
	 * @param maxWaitNanos how long the request may wait for its turn (delay mode); 0 rejects at once
	 */
	public Acquisition(String limitId, Limit limit, String key, long cost, long maxWaitNanos) {
		this(limitId, limit, key, cost, maxWaitNanos, null);
	}

	/**
	 * Creates an acquisition that never waits.
	 * @param limitId identifies the limit's budget
	 * @param limit what the budget allows
	 * @param key whose budget
	 * @param cost how many tokens
	 */
	public Acquisition(String limitId, Limit limit, String key, long cost) {
		this(limitId, limit, key, cost, 0);
	}

	public Acquisition {
		Objects.requireNonNull(limitId, "limitId");
		Objects.requireNonNull(limit, "limit");
		Objects.requireNonNull(key, "key");
		if (cost <= 0 || cost > limit.burst()) {
			throw new IllegalArgumentException(
					"cost must be between 1 and the burst (" + limit.burst() + ") of '" + limitId + "', was " + cost);
		}
		if (maxWaitNanos < 0) {
			throw new IllegalArgumentException("maxWaitNanos must not be negative, was " + maxWaitNanos);
		}
		if (ban != null && limit.algorithm() == Algorithm.CONCURRENCY) {
			throw new IllegalArgumentException("a concurrency limit has no budget to run into: it cannot ban");
		}
	}
}
