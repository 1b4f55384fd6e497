package io.github.ratelimit.core;

import org.jspecify.annotations.Nullable;

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

	@Override
	public @Nullable Decision tryAcquire(long nowNanos, long cost, long maxWaitNanos) {
		long interval = this.limit.emissionIntervalNanos();
		long tolerance = this.limit.toleranceNanos();
		long increment = cost * interval;
		while (true) {
			long tat = (long) TAT.getVolatile(this);
			if (tat == RETIRED) {
				return null;
			}
			long base = Math.max(tat, nowNanos);
			long newTat = base + increment;
			long used = newTat - nowNanos;
			long turn = (maxWaitNanos > 0) ? base - nowNanos : 0;
			if (used > tolerance || turn > maxWaitNanos) {
				long available = (tolerance - (base - nowNanos)) / interval;
				long retryAfter = Math.max(used - tolerance, (maxWaitNanos > 0) ? turn - maxWaitNanos : 0);
				return Decision.rejected(this.limit.limit(), Math.max(0, available), base - nowNanos,
						untilNext(base - nowNanos), retryAfter);
			}
			if (TAT.compareAndSet(this, tat, newTat)) {
				long remaining = (tolerance - used) / interval;
				return (turn > 0) ? Decision.delayed(this.limit.limit(), remaining, used, untilNext(used), turn)
						: Decision.allowed(this.limit.limit(), remaining, used, untilNext(used));
			}
		}
	}
}
