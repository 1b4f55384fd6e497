package io.github.ratelimit.core;

import org.jspecify.annotations.Nullable;

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

	@Override
	public @Nullable Decision tryAcquire(long nowNanos, long cost, long maxWaitNanos) {
		long interval = this.limit.emissionIntervalNanos();
		long tolerance = this.limit.toleranceNanos();
		long increment = cost * interval;
		long tat = (long) TAT.getVolatile(this);
		while (true) {
			if (tat == RETIRED) {
				return null;
			}
			long base = Math.max(tat, nowNanos);
			long newTat = base + increment;
			long used = newTat - nowNanos;
			long wait = used - tolerance;
			if (wait > maxWaitNanos) {
				long available = (tolerance - (base - nowNanos)) / interval;
				return Decision.rejected(this.limit.limit(), Math.max(0, available), base - nowNanos,
						untilNext(base - nowNanos), wait);
			}
			// A failed exchange hands back the value that beat it, with the cache line already held for
			// the next attempt: no second read between two threads racing on one key.
			long witness = (long) TAT.compareAndExchange(this, tat, newTat);
			if (witness == tat) {
				if (wait <= 0) {
					return Decision.allowed(this.limit.limit(), (tolerance - used) / interval, used, untilNext(used));
				}
				// Reserved ahead (delay mode): the request proceeds once its tokens have refilled.
				return Decision.delayed(this.limit.limit(), 0, used, untilNext(used), wait);
			}
			tat = witness;
		}
	}
}
