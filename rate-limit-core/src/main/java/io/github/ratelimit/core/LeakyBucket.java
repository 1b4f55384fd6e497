package io.github.ratelimit.core;

/**
 * One key's leaky bucket: a queue of at most {@code burst} requests, drained at {@code limit} per
 * {@code period} (one every {@code T}). Like {@link TokenBucket} its state is one timestamp,
 * {@code tat}, here the time at which the queue would be empty.
 * <p>
 * As a <em>meter</em> ({@code maxWaitNanos == 0}) a request is admitted at once when the queue has
 * room ({@code max(tat, now) + c * T - now <= burst * T}): the leaky bucket as a meter is the GCRA
 * token bucket, decision for decision. As a <em>queue</em> (delay mode, {@code maxWaitNanos > 0}) every
 * admitted request also waits for its turn, {@code max(tat, now) - now}, so that even simultaneous
 * requests leave spaced at the drain rate: that is traffic shaping. A request is rejected when the
 * queue is full or its turn is further away than {@code maxWaitNanos}.
 * <p>
 * Concurrency: a compare-and-set loop on the timestamp, as in {@link TokenBucket}.
 */
final class LeakyBucket extends GcraState {

	/**
	 * Creates an empty bucket.
	 * @param limit the limit it enforces
	 */
	LeakyBucket(Limit limit) {
		super(limit);
	}

	LeakyBucket(Limit limit, long tat) {
		super(limit, tat);
	}

	/** The queue admits only what it has room for. */
	@Override
	boolean fits(long excessNanos, long maxWaitNanos) {
		return excessNanos <= 0;
	}

	/** As a queue (delay mode) every request waits for its turn; as a meter none does. */
	@Override
	long waitNanos(long queuedNanos, long excessNanos, long maxWaitNanos) {
		return (maxWaitNanos > 0) ? queuedNanos : 0;
	}
}
