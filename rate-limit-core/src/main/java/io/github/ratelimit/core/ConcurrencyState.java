package io.github.ratelimit.core;

/**
 * One key's requests in flight under a {@link Algorithm#CONCURRENCY} limit: {@code tryAcquire} takes
 * {@code cost} slots when at most {@code limit} are then held, {@code release} gives them back. Time
 * plays no part: a rejected request is told to retry after a nominal second (the limit's period),
 * since nobody can tell when a request in flight ends.
 * <p>
 * Decisions read: {@code remaining} the free slots, {@code reset} and the time until additional quota
 * zero (there is no time to tell), and a rejection's retry-after one second.
 * <p>
 * Concurrency: a lock per key (the state is one number); exact under any number of threads. Moved to
 * another limit ({@link #moveTo(Limit, long)}), the slots held carry over, and the new limit applies to
 * the next acquisition.
 */
final class ConcurrencyState extends LockedState {

	private long held;

	ConcurrencyState(Limit limit) {
		super(limit);
	}

	/** A rejection tells the free slots and a retry after the nominal second (the limit's period). */
	@Override
	Decision decideLocked(long nowNanos, long cost, boolean take) {
		long max = this.limit.limit();
		if (this.held + cost > max) {
			long retry = this.limit.period().toNanos();
			return Decision.rejected(max, Math.max(0, max - this.held), 0, retry, retry);
		}
		if (take) {
			this.held += cost;
		}
		return peekLocked(nowNanos);
	}

	@Override
	Decision releaseLocked(long nowNanos, long cost) {
		this.held = Math.max(0, this.held - cost);
		return peekLocked(nowNanos);
	}

	/** A slot is given back by its release when the request ends, never by a receipt. */
	@Override
	public long mark(long nowNanos, Decision admitted) {
		return Receipt.NO_MARK;
	}

	@Override
	Decision giveBackLocked(long nowNanos, long cost, long mark, Limit admittedUnder) {
		return releaseLocked(nowNanos, cost);
	}

	@Override
	Decision peekLocked(long nowNanos) {
		return Decision.allowed(this.limit.limit(), Math.max(0, this.limit.limit() - this.held), 0, 0);
	}

	@Override
	LimiterState successor(Limit limit, long nowNanos) {
		ConcurrencyState next = new ConcurrencyState(limit);
		next.held = this.held;
		return next;
	}
}
