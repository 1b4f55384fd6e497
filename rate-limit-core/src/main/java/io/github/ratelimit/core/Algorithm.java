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
	 * {@code period}; implemented as GCRA with one timestamp per key (see {@link TokenBucket}).
	 */
	TOKEN_BUCKET("token-bucket");

	private final String id;

	Algorithm(String id) {
		this.id = id;
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
