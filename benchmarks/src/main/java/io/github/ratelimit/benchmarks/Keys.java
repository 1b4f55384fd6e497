package io.github.ratelimit.benchmarks;

import java.util.SplittableRandom;

/**
 * The keys a benchmark spends budgets of, and the order they are asked in: IPv4-like strings
 * ({@code 10.0.0.1}, ...), built once so that no benchmark pays for building them, and a long random
 * sequence of key indexes that every thread walks from its own starting point. Immutable once built.
 * <p>
 * Each key exists twice: the string a map stores ({@link #get(int)}, used to fill it) and an equal but
 * distinct string that requests carry ({@link #request(int)}), as a key read from an HTTP request is
 * never the very object a map holds; so every lookup compares the key's characters, as in production.
 */
public final class Keys {

	/** Length of the shared random sequence; a power of two. */
	static final int SEQUENCE_LENGTH = 1 << 20;

	private final String[] names;

	private final String[] requestNames;

	private final int[] sequence;

	/**
	 * Builds {@code count} keys.
	 * @param count how many distinct keys; positive
	 */
	public Keys(int count) {
		if (count <= 0) {
			throw new IllegalArgumentException("count must be positive, was " + count);
		}
		this.names = new String[count];
		this.requestNames = new String[count];
		for (int i = 0; i < count; i++) {
			this.names[i] = name(i);
			this.requestNames[i] = new String(this.names[i]);
		}
		this.sequence = new int[SEQUENCE_LENGTH];
		SplittableRandom random = new SplittableRandom(42);
		for (int i = 0; i < SEQUENCE_LENGTH; i++) {
			this.sequence[i] = random.nextInt(count);
		}
	}

	/**
	 * Returns the name of the key at an index: an IPv4 address in 10.0.0.0/8, like a client IP.
	 * @param index from 0 to 2^24 - 2
	 * @return e.g. {@code 10.0.0.1} for index 0
	 */
	public static String name(int index) {
		int n = index + 1;
		return "10." + ((n >>> 16) & 0xFF) + "." + ((n >>> 8) & 0xFF) + "." + (n & 0xFF);
	}

	/**
	 * Returns how many distinct keys there are.
	 * @return the count
	 */
	public int count() {
		return this.names.length;
	}

	/**
	 * Returns a key by index.
	 * @param index from 0 to {@code count() - 1}
	 * @return the key
	 */
	public String get(int index) {
		return this.names[index];
	}

	/**
	 * Returns a key as a request carries it: equal to {@link #get(int)}, but another object.
	 * @param index from 0 to {@code count() - 1}
	 * @return the key
	 */
	public String request(int index) {
		return this.requestNames[index];
	}

	/**
	 * Returns the key index at a position of the random sequence.
	 * @param position any int; taken modulo the sequence length
	 * @return a key index
	 */
	public int indexAt(int position) {
		return this.sequence[position & (SEQUENCE_LENGTH - 1)];
	}
}
