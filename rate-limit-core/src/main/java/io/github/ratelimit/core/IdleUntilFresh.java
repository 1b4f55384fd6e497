package io.github.ratelimit.core;

import com.github.benmanes.caffeine.cache.Expiry;

/**
 * How long a rate table keeps a state: until it has been left alone for as long as its limit needs to
 * become fresh again, plus a second of slack, so that expiry never changes a decision. Reads are quiet
 * (no expiry recomputed); an operation that finds its entry with less time left than it may need
 * ({@link #neededNanos}) keeps it longer ({@link #keptNanos}).
 */
final class IdleUntilFresh implements Expiry<String, LimiterState> {

	private static final long SLACK_NANOS = 1_000_000_000L;

	/** The longest an entry is kept for an operation, about 36 years (Caffeine's range ends at 2^62 ns). */
	private static final long HORIZON_NANOS = 1L << 60;

	@Override
	public long expireAfterCreate(String key, LimiterState state, long currentTime) {
		return state.limit().idleNanosUntilFresh() + SLACK_NANOS;
	}

	@Override
	public long expireAfterUpdate(String key, LimiterState state, long currentTime, long currentDuration) {
		return Math.max(currentDuration, state.limit().idleNanosUntilFresh() + SLACK_NANOS);
	}

	@Override
	public long expireAfterRead(String key, LimiterState state, long currentTime, long currentDuration) {
		// A reader that took the time before a stall must not pull the expiry back in.
		return Math.max(currentDuration, state.limit().idleNanosUntilFresh() + SLACK_NANOS);
	}

	/**
	 * The time an entry must still have before it may expire, when an operation of this limit and wait
	 * starts: whatever the operation does, the state is fresh again within the limit's idle time plus
	 * the wait it may reserve; half the slack is kept on top.
	 */
	static long neededNanos(Limit limit, long maxWaitNanos) {
		return untilFresh(limit, maxWaitNanos) + SLACK_NANOS / 2;
	}

	/**
	 * What an entry is given when it is kept longer: what it needs, the whole slack, and a sixteenth of
	 * the idle time, so that a busy key is kept longer at most once per half second (or per sixteenth of
	 * its idle time, when that is longer) instead of on every read.
	 */
	static long keptNanos(Limit limit, long maxWaitNanos) {
		return untilFresh(limit, maxWaitNanos) + SLACK_NANOS + Math.min(limit.idleNanosUntilFresh(), HORIZON_NANOS) / 16;
	}

	/** The idle time plus the wait, at most {@link #HORIZON_NANOS} (so both sums stay within Caffeine's range). */
	private static long untilFresh(Limit limit, long maxWaitNanos) {
		long idle = limit.idleNanosUntilFresh();
		return (idle >= HORIZON_NANOS || maxWaitNanos >= HORIZON_NANOS - idle) ? HORIZON_NANOS : idle + maxWaitNanos;
	}

}
