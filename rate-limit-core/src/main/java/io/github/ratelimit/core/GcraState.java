package io.github.ratelimit.core;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The state the two buckets share: one timestamp, the theoretical arrival time ({@code tat}) at which
 * the bucket would be full (token bucket) or empty (leaky bucket), updated by compare-and-set.
 * <p>
 * With {@code T} the time one token takes ({@code period / limit}) and {@code tau = burst * T}, the
 * tokens available at {@code now} are {@code (tau - (tat - now)) / T}. Giving tokens back moves
 * {@code tat} back by {@code cost * T}, never before {@code now} (a full bucket stays full). The next
 * token (or drain) comes when {@code tau - (tat - now)} reaches the next multiple of {@code T}.
 */
abstract sealed class GcraState implements LimiterState permits TokenBucket, LeakyBucket {

	static final VarHandle TAT;

	static {
		try {
			TAT = MethodHandles.lookup().findVarHandle(GcraState.class, "tat", long.class);
		}
		catch (ReflectiveOperationException ex) {
			throw new ExceptionInInitializerError(ex);
		}
	}

	final Limit limit;

	@SuppressWarnings("unused") // accessed through TAT
	private volatile long tat;

	GcraState(Limit limit) {
		this.limit = limit;
		this.tat = Long.MIN_VALUE / 2;
	}

	@Override
	public final Limit limit() {
		return this.limit;
	}

	@Override
	public final Decision release(long nowNanos, long cost) {
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
	public final Decision check(long nowNanos, long cost) {
		// As the meter decides (no wait), on one read of tat: the buckets agree when nothing waits.
		long interval = this.limit.emissionIntervalNanos();
		long tolerance = this.limit.toleranceNanos();
		long tat = (long) TAT.getVolatile(this);
		long base = Math.max(tat, nowNanos);
		long used = base + cost * interval - nowNanos;
		if (used > tolerance) {
			long available = (tolerance - (base - nowNanos)) / interval;
			return Decision.rejected(this.limit.limit(), Math.max(0, available), base - nowNanos,
					untilNext(base - nowNanos), used - tolerance);
		}
		return peek(nowNanos);
	}

	@Override
	public final Decision peek(long nowNanos) {
		long used = Math.max(0, (long) TAT.getVolatile(this) - nowNanos);
		return Decision.allowed(this.limit.limit(),
				Math.max(0, (this.limit.toleranceNanos() - used) / this.limit.emissionIntervalNanos()), used,
				untilNext(used));
	}

	/**
	 * Returns the time until one more token is available (the next drain of a queue), given the time
	 * {@code used = tat - now} the bucket needs to become whole again; zero when nothing is spent.
	 * Reserved tokens (delay mode, {@code used > tau}) count as spent: the next token is the first one
	 * beyond them.
	 */
	final long untilNext(long used) {
		if (used <= 0) {
			return 0;
		}
		long interval = this.limit.emissionIntervalNanos();
		long credit = this.limit.toleranceNanos() - used;
		long available = Math.max(0, Math.floorDiv(credit, interval));
		return (available + 1) * interval - credit;
	}
}
