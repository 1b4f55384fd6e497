package io.github.ratelimit.core;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * One key's token bucket, implemented as GCRA (the generic cell rate algorithm): the whole state is a
 * single timestamp, the theoretical arrival time ({@code tat}) at which the bucket would be full.
 * <p>
 * With {@code T} the refill time of one token and {@code tau = burst * T}, a request of cost {@code c}
 * at time {@code now} computes {@code newTat = max(tat, now) + c * T} and is allowed when
 * {@code newTat - now <= tau}. That is exactly a bucket of {@code burst} tokens refilled continuously
 * at one token per {@code T}: the tokens available at {@code now} are {@code (tau - (tat - now)) / T}.
 * <p>
 * Concurrency: the timestamp is updated with a compare-and-set loop, so the hot path takes no lock
 * and allocates only the returned {@link Decision}. A rejected request writes nothing. Exact under
 * any number of threads: every allowed request moved {@code tat} forward by its own {@code c * T}.
 */
public final class TokenBucket implements LimiterState {

	private static final VarHandle TAT;

	static {
		try {
			TAT = MethodHandles.lookup().findVarHandle(TokenBucket.class, "tat", long.class);
		}
		catch (ReflectiveOperationException ex) {
			throw new ExceptionInInitializerError(ex);
		}
	}

	private final Limit limit;

	@SuppressWarnings("unused") // accessed through TAT
	private volatile long tat;

	/**
	 * Creates a full bucket.
	 * @param limit the limit it enforces
	 */
	public TokenBucket(Limit limit) {
		this.limit = limit;
		this.tat = Long.MIN_VALUE / 2;
	}

	@Override
	public Limit limit() {
		return this.limit;
	}

	@Override
	public Decision tryAcquire(long nowNanos, long cost, long maxWaitNanos) {
		long interval = this.limit.emissionIntervalNanos();
		long tolerance = this.limit.toleranceNanos();
		long increment = cost * interval;
		while (true) {
			long tat = (long) TAT.getVolatile(this);
			long base = Math.max(tat, nowNanos);
			long newTat = base + increment;
			long used = newTat - nowNanos;
			long wait = used - tolerance;
			if (wait > maxWaitNanos) {
				long available = (tolerance - (base - nowNanos)) / interval;
				return Decision.rejected(this.limit.limit(), Math.max(0, available), base - nowNanos, wait);
			}
			if (TAT.compareAndSet(this, tat, newTat)) {
				if (wait <= 0) {
					return Decision.allowed(this.limit.limit(), (tolerance - used) / interval, used);
				}
				// Reserved ahead (delay mode): the request proceeds once its tokens have refilled.
				return Decision.delayed(this.limit.limit(), 0, used, wait);
			}
		}
	}

	@Override
	public Decision release(long nowNanos, long cost) {
		long decrement = cost * this.limit.emissionIntervalNanos();
		while (true) {
			long tat = (long) TAT.getVolatile(this);
			long newTat = Math.max(tat - decrement, nowNanos);
			if (newTat >= tat || TAT.compareAndSet(this, tat, newTat)) {
				return peek(nowNanos);
			}
		}
	}

	@Override
	public Decision peek(long nowNanos) {
		long used = Math.max(0, (long) TAT.getVolatile(this) - nowNanos);
		return Decision.allowed(this.limit.limit(), (this.limit.toleranceNanos() - used) / this.limit.emissionIntervalNanos(),
				used);
	}
}
