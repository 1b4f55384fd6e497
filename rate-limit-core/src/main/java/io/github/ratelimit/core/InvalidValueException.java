package io.github.ratelimit.core;

/**
 * A value a builder refuses ({@link Limit.Builder}, the Redis store's builder): which value, what is
 * wrong with it (the message), and what to do instead, so that a caller which knows where the value came
 * from (a property, an annotation attribute) can say so without checking it again. Immutable.
 */
public final class InvalidValueException extends IllegalArgumentException {

	private static final long serialVersionUID = 1L;

	private final String name;

	private final String action;

	/**
	 * Creates the exception.
	 * @param name the value's name as the builder calls it, e.g. {@code burst}
	 * @param problem what is wrong, e.g. {@code burst must be positive, was 0}
	 * @param action what to do, e.g. {@code Set a positive burst}
	 */
	public InvalidValueException(String name, String problem, String action) {
		super(problem);
		this.name = name;
		this.action = action;
	}

	/**
	 * Returns which value is wrong.
	 * @return its name as the builder calls it, e.g. {@code limit}, {@code period} or {@code burst}
	 */
	public String name() {
		return this.name;
	}

	/**
	 * Returns what to do instead.
	 * @return a sentence, e.g. {@code Set a positive burst or leave it unset}
	 */
	public String action() {
		return this.action;
	}
}
