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
	TOKEN_BUCKET,

	/**
	 * {@code limit} requests per window of {@code period}, windows aligned to the epoch so every
	 * instance agrees on boundaries. Cheapest; allows up to twice the limit around a boundary
	 * (see {@code FixedWindow}).
	 */
	FIXED_WINDOW,

	/**
	 * At most {@code limit} requests in any interval of length {@code period}, exactly: one timestamp
	 * per admitted token (see {@code SlidingWindowLog}). Memory per key grows with the limit.
	 */
	SLIDING_WINDOW_LOG,

	/**
	 * The previous window's count weighted by its remaining overlap plus the current count: two
	 * counters per key, a smooth approximation of the sliding window (see {@code SlidingWindowCounter}).
	 */
	SLIDING_WINDOW_COUNTER,

	/**
	 * A bucket that drains at {@code limit} per {@code period} with a queue of {@code burst}: as a meter
	 * (requests rejected at once) it is the token bucket; in delay mode it shapes traffic, serving even
	 * simultaneous requests spaced at the drain rate (see {@code LeakyBucket}).
	 */
	LEAKY_BUCKET,

	/**
	 * At most {@code limit} requests in flight per key: a slot is taken when a request is decided and
	 * given back when its response is complete (see {@code ConcurrencyState}). Not a rate: it has no
	 * period, no burst and no turn to wait for; a rejected request may retry after a second.
	 */
	CONCURRENCY;

	/** The constant's name in kebab-case. */
	private final String id = name().toLowerCase(Locale.ROOT).replace('_', '-');

	/**
	 * Returns whether the algorithm has a capacity distinct from the limit ({@code burst}).
	 * @return {@code true} for the buckets; windows hold {@code limit} per window
	 */
	public boolean hasBurst() {
		return this == TOKEN_BUCKET || this == LEAKY_BUCKET;
	}

	/**
	 * Returns whether a request can wait for its turn (delay mode) instead of being rejected.
	 * @return {@code true} for the buckets; a window has no turn to wait for short of its end
	 */
	public boolean canDelay() {
		return this == TOKEN_BUCKET || this == LEAKY_BUCKET;
	}

	/**
	 * Returns whether the algorithm limits requests over time (every algorithm but
	 * {@link #CONCURRENCY}, which limits requests in flight).
	 * @return {@code true} for the rate algorithms
	 */
	public boolean isRate() {
		return this != CONCURRENCY;
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
		return Arrays.stream(values())
			.filter((algorithm) -> algorithm.id.equals(normalized))
			.findFirst()
			.orElseThrow(() -> new IllegalArgumentException("Unknown algorithm '" + name + "'; supported: " + supportedIds()));
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
