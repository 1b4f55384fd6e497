package io.github.ratelimit.core;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.math.BigInteger;

import org.jspecify.annotations.Nullable;

/**
 * The state the two buckets share: one timestamp, the theoretical arrival time ({@code tat}) at which
 * the bucket would be full (token bucket) or empty (leaky bucket), updated by compare-and-set.
 * <p>
 * With {@code T} the time one token takes ({@code period / limit}) and {@code tau = burst * T}, the
 * tokens available at {@code now} are {@code (tau - (tat - now)) / T}. Giving tokens back moves
 * {@code tat} back by {@code cost * T}, never before {@code now} (a full bucket stays full). The next
 * token (or drain) comes when {@code tau - (tat - now)} reaches the next multiple of {@code T}.
 * <p>
 * A retired state ({@link #moveTo(Limit, long)}) holds {@link #RETIRED} as its {@code tat}: retiring
 * is a compare-and-set like any acquisition, so a token is either taken before the move (and carried
 * over) or after it, from the successor; never from both.
 */
abstract sealed class GcraState implements LimiterState permits TokenBucket, LeakyBucket {

	static final VarHandle TAT;

	/** The {@code tat} of a retired state: every operation on it answers {@code null}. */
	static final long RETIRED = Long.MAX_VALUE;

	/** The most a move carries, unless the new bucket is larger (see {@link #scaled}). */
	private static final long MAX_SCALED_NANOS = 1L << 61;

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
		this(limit, Long.MIN_VALUE / 2);
	}

	GcraState(Limit limit, long tat) {
		this.limit = limit;
		this.tat = tat;
	}

	@Override
	public final Limit limit() {
		return this.limit;
	}

	@Override
	public final @Nullable Decision release(long nowNanos, long cost) {
		return moveBack(nowNanos, cost * this.limit.emissionIntervalNanos());
	}

	@Override
	public final long mark(long nowNanos, Decision admitted) {
		return nowNanos + admitted.resetNanos();
	}

	/**
	 * The step {@code cost * T} taken at {@code mark} (the {@code tat} it wrote) is refilled first by the
	 * steps before it, then its own: at {@code now} it still holds {@code mark - now} of it, at most the
	 * step. Steps taken after it move back by that much. Under a limit changed since, the held time is
	 * rescaled as a move rescales {@code tat}, rounded down.
	 */
	@Override
	public final @Nullable Decision giveBack(long nowNanos, long cost, long mark, Limit admittedUnder) {
		long step = cost * admittedUnder.emissionIntervalNanos();
		long held = Math.min(step, Math.max(0, mark - nowNanos));
		if (admittedUnder.emissionIntervalNanos() != this.limit.emissionIntervalNanos()) {
			held = BigInteger.valueOf(held)
				.multiply(BigInteger.valueOf(this.limit.emissionIntervalNanos()))
				.divide(BigInteger.valueOf(admittedUnder.emissionIntervalNanos()))
				.min(BigInteger.valueOf(Long.MAX_VALUE / 4))
				.longValue();
		}
		return moveBack(nowNanos, held);
	}

	/** Moves {@code tat} back by {@code nanos}, never before {@code now} (a full bucket stays full). */
	private @Nullable Decision moveBack(long nowNanos, long nanos) {
		while (true) {
			long tat = (long) TAT.getVolatile(this);
			if (tat == RETIRED) {
				return null;
			}
			long newTat = Math.max(tat - nanos, nowNanos);
			if (newTat >= tat || TAT.compareAndSet(this, tat, newTat)) {
				return peek(nowNanos);
			}
		}
	}

	@Override
	public final @Nullable Decision tryAcquire(long nowNanos, long cost, long maxWaitNanos) {
		return decide(nowNanos, cost, maxWaitNanos, true);
	}

	@Override
	public final @Nullable Decision check(long nowNanos, long cost) {
		// As the meter decides (no wait), on one read of tat: the buckets agree when nothing waits.
		return decide(nowNanos, cost, 0, false);
	}

	/**
	 * Decides on {@code cost} tokens, as {@link #tryAcquire} when {@code take} (an admitted request moves
	 * {@code tat} forward by its {@code cost * T}), else as {@link #check}, on one read of {@code tat}. A
	 * failed exchange hands back the value that beat it, with the cache line already held for the next
	 * attempt: no second read between two threads racing on one key.
	 */
	private @Nullable Decision decide(long nowNanos, long cost, long maxWaitNanos, boolean take) {
		long interval = this.limit.emissionIntervalNanos();
		long tolerance = this.limit.toleranceNanos();
		long tat = (long) TAT.getVolatile(this);
		while (tat != RETIRED) {
			long queued = Math.max(tat, nowNanos) - nowNanos;
			long used = queued + cost * interval;
			long excess = used - tolerance;
			long wait = waitNanos(queued, excess, maxWaitNanos);
			if (!fits(excess, maxWaitNanos) || wait > maxWaitNanos) {
				long available = (tolerance - queued) / interval;
				return Decision.rejected(this.limit.limit(), Math.max(0, available), queued, untilNext(queued),
						Math.max(excess, wait - maxWaitNanos));
			}
			if (!take) {
				return allowedAt(tat, nowNanos);
			}
			long witness = (long) TAT.compareAndExchange(this, tat, nowNanos + used);
			if (witness == tat) {
				long remaining = Math.max(0, (tolerance - used) / interval);
				return (wait > 0) ? Decision.delayed(this.limit.limit(), remaining, used, untilNext(used), wait)
						: Decision.allowed(this.limit.limit(), remaining, used, untilNext(used));
			}
			tat = witness;
		}
		return null;
	}

	/**
	 * Whether a request whose tokens exceed the bucket by {@code excessNanos} (of refill; zero or less when
	 * they are there) may be admitted, when it may wait {@code maxWaitNanos}.
	 */
	abstract boolean fits(long excessNanos, long maxWaitNanos);

	/**
	 * How long an admitted request waits before it proceeds (zero or less: not at all), given the time
	 * {@code queuedNanos} the bucket needs to become whole before it and its tokens' excess over the bucket.
	 */
	abstract long waitNanos(long queuedNanos, long excessNanos, long maxWaitNanos);

	@Override
	public final @Nullable Decision peek(long nowNanos) {
		long tat = (long) TAT.getVolatile(this);
		return (tat == RETIRED) ? null : allowedAt(tat, nowNanos);
	}

	private Decision allowedAt(long tat, long nowNanos) {
		long used = Math.max(0, tat - nowNanos);
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

	@Override
	public final @Nullable LimiterState moveTo(Limit limit, long nowNanos) {
		LimiterState.requireSameAlgorithm(this.limit, limit);
		while (true) {
			long tat = (long) TAT.getVolatile(this);
			if (tat == RETIRED) {
				return null;
			}
			if (TAT.compareAndSet(this, tat, RETIRED)) {
				long used = tat - nowNanos;
				long newTat = (used <= 0) ? Long.MIN_VALUE / 2 : nowNanos + scaled(used, this.limit, limit);
				return (this instanceof TokenBucket) ? new TokenBucket(limit, newTat) : new LeakyBucket(limit, newTat);
			}
		}
	}

	/**
	 * The time {@code nanos = tat - now} of one limit as the other's: {@code nanos * T' / T}, so the tokens
	 * spent stay spent, also beyond a smaller new bucket (then the key waits until it is back within
	 * it): a key whose limit goes down and up again never comes back with a second budget.
	 * <p>
	 * Rounded up (a hair stricter, never looser), at most the new limit's whole
	 * bucket or 2^61 ns (about 73 years), whichever is more: between limits of extreme ratios, such as a
	 * million a second and one a century, the product would not fit a long; the key's whole new bucket
	 * stays spent instead, and for at least that long.
	 */
	private static long scaled(long nanos, Limit from, Limit to) {
		if (nanos <= 0) {
			return 0;
		}
		long most = Math.max(MAX_SCALED_NANOS, to.toleranceNanos());
		BigInteger[] quotient = BigInteger.valueOf(nanos)
			.multiply(BigInteger.valueOf(to.emissionIntervalNanos()))
			.divideAndRemainder(BigInteger.valueOf(from.emissionIntervalNanos()));
		if (quotient[0].bitLength() > 62) {
			return most;
		}
		return Math.min(most, quotient[0].longValue() + (quotient[1].signum() != 0 ? 1 : 0));
	}
}
