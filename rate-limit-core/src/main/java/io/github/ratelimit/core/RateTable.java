package io.github.ratelimit.core;

import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Policy;

import org.jspecify.annotations.Nullable;

/**
 * The states of one rate limit in a {@link CaffeineRateLimitStore}: the tracked states, expiring when
 * fresh again ({@link IdleUntilFresh}), those just expired while a thread may still hold them (a
 * weak-valued side map), and the limit's {@link OverflowBudgets} for the keys a full table does not
 * track. The store decides a tracked key quietly on {@link #quietEntry}; everything else comes here:
 * the full path of an operation ({@link #decide}), checks, reads, give-backs and resets. The class
 * description of {@link CaffeineRateLimitStore} tells why each part is there.
 */
final class RateTable {

	/** A full table tries to expire states at most once per millisecond of the store's clock. */
	private static final long CLEAN_UP_INTERVAL_NANOS = 1_000_000L;

	/** Named after the store: what it logs is the store's. */
	private static final System.Logger logger = System.getLogger(CaffeineRateLimitStore.class.getName());

	static final Operation ACQUIRE = (state, now, cost, maxWaitNanos) -> state.tryAcquire(now, cost, maxWaitNanos);

	static final Operation RELEASE = (state, now, cost, maxWaitNanos) -> state.release(now, cost);

	private final String limitId;

	private final long maximumSize;

	private final RateLimitClock clock;

	private final Cache<String, LimiterState> states;

	/** Read quietly: no read buffer, no maintenance, no expiry recomputed. */
	private final Policy<String, LimiterState> policy;

	private final Cache<String, LimiterState> removedButReachable;

	private final Policy.VarExpiration<String, LimiterState> expiration;

	private final AtomicLong tracked = new AtomicLong();

	private final OverflowBudgets overflow;

	private final LongAdder overflowDecisions = new LongAdder();

	/** When {@link #expireStates} last let Caffeine remove fresh states (a time of the store's clock). */
	private final AtomicLong lastCleanUp;

	private final AtomicBoolean full = new AtomicBoolean();

	RateTable(String limitId, long maximumSize, RateLimitClock clock, Executor executor, long seed) {
		this.limitId = limitId;
		this.maximumSize = maximumSize;
		this.clock = clock;
		this.overflow = new OverflowBudgets(seed, clock);
		// A clean-up is due at once: times are compared by difference, which Long.MIN_VALUE would overflow.
		this.lastCleanUp = new AtomicLong(clock.nanos() - CLEAN_UP_INTERVAL_NANOS);
		this.removedButReachable = Caffeine.newBuilder().weakValues().executor(executor).build();
		this.states = Caffeine.newBuilder()
			.ticker(clock::nanos)
			.executor(executor)
			.expireAfter(new IdleUntilFresh())
			// Called inside the atomic removal, before any new state for the key can be created.
			.<String, LimiterState>evictionListener((key, state, cause) -> {
				this.tracked.decrementAndGet();
				if (key != null && state != null) {
					this.removedButReachable.put(key, state);
				}
			})
			.build();
		this.policy = this.states.policy();
		this.expiration = this.policy.expireVariably().orElseThrow();
	}

	/**
	 * Returns the key's entry when the store may decide on it quietly (its fast path): its state is of this very
	 * limit, and the entry has what the operation may need left before it expires. {@code null}: take the full path.
	 */
	Policy.@Nullable CacheEntry<String, LimiterState> quietEntry(String key, Limit limit, long maxWaitNanos) {
		Policy.CacheEntry<String, LimiterState> entry = this.policy.getEntryIfPresentQuietly(key);
		return (entry != null && entry.getValue().limit() == limit
				&& entry.expiresAt() - entry.snapshotAt() >= IdleUntilFresh.neededNanos(limit, maxWaitNanos)) ? entry : null;
	}

	/**
	 * Applies an operation to the key's state: the tracked one; else a new one when the table has room
	 * and the key's overflow budget is fresh (only when {@code mayTrack}); else the overflow budget.
	 */
	Decision decide(String key, Limit limit, long cost, long maxWaitNanos, boolean mayTrack, Operation op) {
		while (true) {
			// null: the state met was retired by a change of the key's limit, and its successor decides;
			// or its entry expired before it could be kept longer, and the next attempt finds it gone.
			Decision decision = decideOnce(key, limit, cost, maxWaitNanos, mayTrack, op);
			if (decision != null) {
				return decision;
			}
		}
	}

	private @Nullable Decision decideOnce(String key, Limit limit, long cost, long maxWaitNanos, boolean mayTrack,
			Operation op) {
		Policy.CacheEntry<String, LimiterState> entry = this.policy.getEntryIfPresentQuietly(key);
		if (entry != null) {
			LimiterState held = entry.getValue();
			long now = entry.snapshotAt();
			if (entry.expiresAt() - now < IdleUntilFresh.neededNanos(limit, maxWaitNanos) && !keep(key, limit, maxWaitNanos)) {
				return null;
			}
			LimiterState state = current(key, held, limit);
			return op.apply(state, (state != held) ? this.clock.nanos() : now, cost, maxWaitNanos);
		}
		if (isFull()) {
			expireStates(this.clock.nanos());
		}
		Decision[] byOverflow = new Decision[1];
		LimiterState state = this.states.get(key, (k) -> {
			LimiterState removed = this.removedButReachable.asMap().remove(k);
			if (removed != null) {
				this.tracked.incrementAndGet();
				return removed;
			}
			LimiterState overflow = this.overflow.of(k, limit);
			long now = this.clock.nanos();
			if (mayTrack && isFresh(overflow, now) && makeRoom()) {
				return limit.newState();
			}
			// Decided here, atomically with the choice, so that no other thread of this key can find the
			// overflow budget fresh in between and start a tracked state beside it.
			if (mayTrack) {
				this.overflowDecisions.increment();
			}
			byOverflow[0] = op.apply(overflow, now, cost, maxWaitNanos);
			return null;
		});
		if (state == null) {
			return byOverflow[0];
		}
		if (maxWaitNanos > 0 && !keep(key, limit, maxWaitNanos)) {
			// Created (or found) with the idle time of its limit: a reservation ahead needs longer.
			return null;
		}
		return op.apply(current(key, state, limit), this.clock.nanos(), cost, maxWaitNanos);
	}

	/** As {@link CaffeineRateLimitStore#check}: one read, no write, and no state created. */
	Decision check(Acquisition acquisition) {
		String key = acquisition.key();
		while (true) {
			// Quiet: a check changes no state, so it never needs the entry kept longer.
			Policy.CacheEntry<String, LimiterState> entry = this.policy.getEntryIfPresentQuietly(key);
			LimiterState state;
			long now;
			if (entry != null) {
				// Of another limit (a plan or a runtime change): moved first, as an acquisition would.
				LimiterState held = entry.getValue();
				state = current(key, held, acquisition.limit());
				now = (state != held) ? this.clock.nanos() : entry.snapshotAt();
			}
			else {
				// Expired while another thread still holds it: that state is the key's budget.
				state = this.removedButReachable.getIfPresent(key);
				if (state == null) {
					state = this.overflow.of(key, acquisition.limit());
				}
				now = this.clock.nanos();
			}
			Decision decision = state.check(now, acquisition.cost());
			if (decision != null) {
				return decision;
			}
		}
	}

	/** As {@link CaffeineRateLimitStore#peek}: the tracked state, or the overflow budget, unchanged. */
	Decision peek(Acquisition acquisition) {
		while (true) {
			LimiterState state = this.policy.getIfPresentQuietly(acquisition.key());
			Decision decision = (state != null ? state : this.overflow.of(acquisition.key(), acquisition.limit()))
				.peek(this.clock.nanos());
			if (decision != null) {
				return decision;
			}
		}
	}

	/** As {@link CaffeineRateLimitStore#giveBack}, for a receipt of this table with its mark. */
	@Nullable Decision giveBack(Acquisition acquisition, long mark) {
		String key = acquisition.key();
		while (true) {
			LimiterState state = this.policy.getIfPresentQuietly(key);
			if (state == null) {
				state = this.removedButReachable.getIfPresent(key);
			}
			if (state == null) {
				state = this.overflow.at(key);
			}
			if (state == null) {
				return null;
			}
			// null: retired by a move meanwhile; its successor holds what was spent.
			Decision decision = state.giveBack(this.clock.nanos(), acquisition.cost(), mark, acquisition.limit());
			if (decision != null) {
				return decision;
			}
		}
	}

	/**
	 * Forgets a key's state and makes its overflow budget whole: a key the table does not track is judged
	 * by it, and so is a tracked key once forgotten while the table is full (an operator's unlock during a
	 * flood must not leave the key with a budget the flood spent).
	 */
	void reset(String key) {
		if (this.states.asMap().remove(key) != null) {
			this.tracked.decrementAndGet();
		}
		this.overflow.reset(key);
	}

	long size() {
		return this.tracked.get();
	}

	long overflowDecisions() {
		return this.overflowDecisions.sum();
	}

	void cleanUp() {
		this.states.cleanUp();
	}

	/**
	 * Keeps a key's entry for what an operation of this acquisition may need and more, from now
	 * (Caffeine's clock, read under the entry's lock): reads are quiet, so this is what keeps a busy key.
	 * @return whether the entry now has what the operation needs; {@code false} when it expired first
	 * (then nothing may be decided on the state it held: ask again)
	 */
	private boolean keep(String key, Limit limit, long maxWaitNanos) {
		this.expiration.setExpiresAfter(key, IdleUntilFresh.keptNanos(limit, maxWaitNanos), TimeUnit.NANOSECONDS);
		Policy.CacheEntry<String, LimiterState> entry = this.policy.getEntryIfPresentQuietly(key);
		return entry != null && entry.expiresAt() - entry.snapshotAt() >= IdleUntilFresh.neededNanos(limit, maxWaitNanos);
	}

	private boolean isFull() {
		return this.tracked.get() >= this.maximumSize;
	}

	/** Takes a place for a new state, unless the table is full. */
	private boolean makeRoom() {
		long max = this.maximumSize;
		while (true) {
			long current = this.tracked.get();
			if (current >= max) {
				if (this.full.compareAndSet(false, true)) {
					logger.log(System.Logger.Level.WARNING, "The rate limit table of '" + this.limitId
							+ "' is full (" + max + " keys, the store's maximum size per limit): keys it does "
							+ "not track are judged by " + CaffeineRateLimitStore.OVERFLOW_BUDGETS
							+ " shared overflow budgets until tracked states expire");
				}
				return false;
			}
			if (this.tracked.compareAndSet(current, current + 1)) {
				if (current + 1 < max - max / 10) {
					// Well below the bound again: the next time it fills up is worth a warning.
					this.full.set(false);
				}
				return true;
			}
		}
	}

	/** Lets Caffeine remove the states that have become fresh, at most once per millisecond. */
	private void expireStates(long now) {
		long last = this.lastCleanUp.get();
		if (now - last >= CLEAN_UP_INTERVAL_NANOS && this.lastCleanUp.compareAndSet(last, now)) {
			this.states.cleanUp();
		}
	}

	/**
	 * Returns the key's state under the limit asked for: the tracked state itself when its limit is
	 * that one, else its successor (what was spent carried over), swapped in atomically for the key.
	 * An update, not a new entry, so the key never expires sooner than its old state would have.
	 */
	private LimiterState current(String key, LimiterState state, Limit limit) {
		if (state.limit().equals(limit)) {
			return state;
		}
		LimiterState now = this.states.asMap().computeIfPresent(key, (k, held) -> {
			LimiterState next = held.limit().equals(limit) ? held : held.moveTo(limit, this.clock.nanos());
			return (next != null) ? next : held;
		});
		return (now != null) ? now : state;
	}

	private static boolean isFresh(LimiterState state, long now) {
		// Every algorithm reports a reset of zero exactly when nothing of its budget is spent; a retired
		// overflow budget is about to be replaced and counts as spent.
		Decision peek = state.peek(now);
		return peek != null && peek.resetNanos() == 0;
	}

	/** What the full path does to the state it finds: acquire, release, or an admission with its mark. */
	@FunctionalInterface
	interface Operation {

		@Nullable Decision apply(LimiterState state, long nowNanos, long cost, long maxWaitNanos);

	}

}
