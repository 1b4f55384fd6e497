package io.github.ratelimit.core;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * The rate limiting algorithms a {@link Limit} can use.
 */
public enum Algorithm {

	/**
	 * A token bucket of capacity {@code burst} refilled continuously at {@code limit} tokens per
	 * {@code period}; implemented as GCRA with one timestamp per key (see {@code TokenBucket}).
	 * Tolerates bursts; exact; 8 bytes of state per key.
	 */
	TOKEN_BUCKET("token-bucket", true, true),

	/**
	 * {@code limit} requests per window of {@code period}, windows aligned to the epoch so every
	 * instance agrees on boundaries. Cheapest; allows up to twice the limit around a boundary
	 * (see {@code FixedWindow}).
	 */
	FIXED_WINDOW("fixed-window", false, false),

	/**
	 * At most {@code limit} requests in any interval of length {@code period}, exactly: one timestamp
	 * per admitted token (see {@code SlidingWindowLog}). Memory per key grows with the limit.
	 */
	SLIDING_WINDOW_LOG("sliding-window-log", false, false),

	/**
	 * The previous window's count weighted by its remaining overlap plus the current count: two
	 * counters per key, a smooth approximation of the sliding window (see {@code SlidingWindowCounter}).
	 */
	SLIDING_WINDOW_COUNTER("sliding-window-counter", false, false),

	/**
	 * A bucket that drains at {@code limit} per {@code period} with a queue of {@code burst}: as a meter
	 * (requests rejected at once) it is the token bucket; in delay mode it shapes traffic, serving even
	 * simultaneous requests spaced at the drain rate (see {@code LeakyBucket}).
	 */
	LEAKY_BUCKET("leaky-bucket", true, true);

	private final String id;

	private final boolean hasBurst;

	private final boolean canDelay;

	Algorithm(String id, boolean hasBurst, boolean canDelay) {
		this.id = id;
		this.hasBurst = hasBurst;
		this.canDelay = canDelay;
	}

	/**
	 * Returns whether the algorithm has a capacity distinct from the limit ({@code burst}).
	 * @return {@code true} for the buckets; windows hold {@code limit} per window
	 */
	public boolean hasBurst() {
		return this.hasBurst;
	}

	/**
	 * Returns whether a request can wait for its turn (delay mode) instead of being rejected.
	 * @return {@code true} for the buckets; a window has no turn to wait for short of its end
	 */
	public boolean canDelay() {
		return this.canDelay;
	}

	/**
	 * Returns the name used in configuration.
	 * @return the kebab-case name, e.g. {@code token-bucket}
	 */
	public String id() {
		return this.id;
	}

	/**
	 * Finds an algorithm by its configuration name (case-insensitive, {@code _} or {@code -}).
	 * @param name the name, e.g. {@code token-bucket}
	 * @return the algorithm
	 * @throws IllegalArgumentException naming the supported algorithms when none matches
	 */
	public static Algorithm fromId(String name) {
		String normalized = name.trim().toLowerCase(Locale.ROOT).replace('_', '-');
		for (Algorithm algorithm : values()) {
			if (algorithm.id.equals(normalized)) {
				return algorithm;
			}
		}
		throw new IllegalArgumentException("Unknown algorithm '" + name + "'; supported: " + supportedIds());
	}

	/**
	 * Lists the configuration names of all algorithms.
	 * @return e.g. {@code token-bucket}
	 */
	public static String supportedIds() {
		return Arrays.stream(values()).map(Algorithm::id).collect(Collectors.joining(", "));
	}

	@Override
	public String toString() {
		return this.id;
	}
}
