package io.github.ratelimit.core;

/**
 * One key's token bucket, implemented as GCRA (the generic cell rate algorithm): the whole state is a
 * single timestamp, the theoretical arrival time ({@code tat}) at which the bucket would be full.
 * <p>
 * With {@code T} the refill time of one token and {@code tau = burst * T}, a request of cost {@code c}
 * at time {@code now} computes {@code newTat = max(tat, now) + c * T} and is allowed when
 * {@code newTat - now <= tau}. That is exactly a bucket of {@code burst} tokens refilled continuously
 * at one token per {@code T}: the tokens available at {@code now} are {@code (tau - (tat - now)) / T}.
 * <p>
 * In delay mode ({@code maxWaitNanos > 0}) a request that lacks tokens may reserve them ahead: it
 * moves {@code tat} forward anyway and waits {@code newTat - now - tau} before it proceeds, provided
 * that wait is at most {@code maxWaitNanos}. A burst is still served at once; only what exceeds it
 * waits.
 * <p>
 * Concurrency: the timestamp is updated with a compare-and-set loop, so the hot path takes no lock
 * and allocates only the returned {@link Decision}. A rejected request writes nothing. Exact under
 * any number of threads: every allowed request moved {@code tat} forward by its own {@code c * T}.
 */
final class TokenBucket extends GcraState {

	/**
	 * Creates a full bucket.
	 * @param limit the limit it enforces
	 */
	TokenBucket(Limit limit) {
		super(limit);
	}

	TokenBucket(Limit limit, long tat) {
		super(limit, tat);
	}

	/** A request that lacks tokens reserves them ahead, when they refill within its wait, and waits for them. */
	@Override
	boolean fits(long excessNanos, long maxWaitNanos) {
		return excessNanos <= maxWaitNanos;
	}

	@Override
	long waitNanos(long queuedNanos, long excessNanos, long maxWaitNanos) {
		return excessNanos;
	}
}
