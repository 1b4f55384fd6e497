package io.github.ratelimit.core;

import org.jspecify.annotations.Nullable;

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
final class ConcurrencyState implements LimiterState {

	private final Limit limit;

	private long held;

	private boolean retired;

	ConcurrencyState(Limit limit) {
		this.limit = limit;
	}

	@Override
	public Limit limit() {
		return this.limit;
	}

	@Override
	public synchronized @Nullable Decision tryAcquire(long nowNanos, long cost, long maxWaitNanos) {
		if (this.retired) {
			return null;
		}
		Decision rejected = rejection(cost);
		if (rejected != null) {
			return rejected;
		}
		this.held += cost;
		return peekLocked();
	}

	@Override
	public synchronized @Nullable Decision check(long nowNanos, long cost) {
		if (this.retired) {
			return null;
		}
		Decision rejected = rejection(cost);
		return (rejected != null) ? rejected : peekLocked();
	}

	@Override
	public synchronized @Nullable Decision release(long nowNanos, long cost) {
		if (this.retired) {
			return null;
		}
		this.held = Math.max(0, this.held - cost);
		return peekLocked();
	}

	/** A slot is given back by its release when the request ends, never by a receipt. */
	@Override
	public long mark(long nowNanos, Decision admitted) {
		return Receipt.NO_MARK;
	}

	@Override
	public @Nullable Decision giveBack(long nowNanos, long cost, long mark, Limit admittedUnder) {
		return release(nowNanos, cost);
	}

	@Override
	public synchronized @Nullable Decision peek(long nowNanos) {
		return this.retired ? null : peekLocked();
	}

	@Override
	public synchronized @Nullable LimiterState moveTo(Limit limit, long nowNanos) {
		LimiterState.requireSameAlgorithm(this.limit, limit);
		if (this.retired) {
			return null;
		}
		this.retired = true;
		ConcurrencyState next = new ConcurrencyState(limit);
		next.held = this.held;
		return next;
	}

	/** The slots held now. */
	synchronized long held() {
		return this.held;
	}

	private @Nullable Decision rejection(long cost) {
		if (this.held + cost <= this.limit.limit()) {
			return null;
		}
		return rejected(this.limit, this.held);
	}

	private Decision peekLocked() {
		return allowed(this.limit, this.held);
	}

	/**
	 * A rejection of a concurrency limit: the free slots, retry after the nominal second.
	 * @param limit the limit
	 * @param held the slots held
	 * @return the decision
	 */
	static Decision rejected(Limit limit, long held) {
		long retry = limit.period().toNanos();
		return Decision.rejected(limit.limit(), Math.max(0, limit.limit() - held), 0, retry, retry);
	}

	/**
	 * How a concurrency limit reads with {@code held} slots taken.
	 * @param limit the limit
	 * @param held the slots held
	 * @return an allowing decision
	 */
	static Decision allowed(Limit limit, long held) {
		return Decision.allowed(limit.limit(), Math.max(0, limit.limit() - held), 0, 0);
	}
}
