package io.github.ratelimit.core;

/**
 * Refusing a key for longer once it keeps running into its limit: when its budget has rejected it
 * {@code after} times within {@code withinNanos} of the first of those rejections, the key is banned for
 * {@code durationNanos}. While banned, every acquisition of the key is rejected at once, with the rest of
 * the ban as its retry-after, and its budget is not asked. Decided by {@link RateLimitStore#admitAll} with
 * the budget, in the same step. Immutable.
 *
 * @param after the rejections that ban the key; at least 1
 * @param withinNanos how long after the first rejection they count; positive
 * @param durationNanos how long the key is banned; positive
 */
public record Ban(long after, long withinNanos, long durationNanos) {

	public Ban {
		if (after < 1) {
			throw new IllegalArgumentException("after must be at least 1, was " + after);
		}
		if (withinNanos <= 0 || durationNanos <= 0) {
			throw new IllegalArgumentException("within and duration must be positive, were " + withinNanos + " and "
					+ durationNanos + " ns");
		}
	}

}
