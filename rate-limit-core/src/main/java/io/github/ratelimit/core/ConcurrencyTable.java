package io.github.ratelimit.core;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReferenceArray;

import org.jspecify.annotations.Nullable;

/**
 * The requests in flight of one concurrency limit, per key: an exact counter (a
 * {@link io.github.ratelimit.core.Algorithm#CONCURRENCY} state) per key that has any, removed the moment
 * its last request ends, so a key with nothing in flight takes no memory. Unlike a rate's table it never
 * expires a state by age: a count of requests in flight is never "fresh" while one runs.
 * <p>
 * Bounded like the rate tables: at most {@code maximumSize} keys; when full, a key it does not track is
 * judged by one of {@value CaffeineRateLimitStore#OVERFLOW_BUDGETS} overflow counters chosen by a seeded
 * hash, shared with every untracked key that hashes there (stricter, never looser). A key is tracked
 * only while its overflow counter is empty, and is released where it was acquired: both decisions are
 * made under the key's lock of the map ({@link ConcurrentHashMap#compute}), so a key never has slots in
 * both places.
 * <p>
 * A reset forgets a key's requests in flight: the slots they held become <em>orphans</em>, which the
 * key's next releases (whichever request they come from) use up before they free a slot. So a request
 * that was in flight at the reset cannot free a slot taken after it, and once every such request has
 * ended the count is exact again; until then it may count more than is in flight, never less.
 * <p>
 * Thread-safe and exact: every acquisition, release and reset of a key runs under that key's lock.
 */
final class ConcurrencyTable {

	private final long maximumSize;

	private final RateLimitClock clock;

	private final long seed;

	private final ConcurrentHashMap<String, LimiterState> held = new ConcurrentHashMap<>();

	/** Per reset key, the slots its requests held at the reset not yet released; changed under the key's lock of {@link #held}. */
	private final ConcurrentHashMap<String, Long> orphans = new ConcurrentHashMap<>();

	private final AtomicReferenceArray<LimiterState> overflow = new AtomicReferenceArray<>(
			CaffeineRateLimitStore.OVERFLOW_BUDGETS);

	ConcurrencyTable(long maximumSize, RateLimitClock clock, long seed) {
		this.maximumSize = maximumSize;
		this.clock = clock;
		this.seed = seed;
	}

	Decision tryAcquire(Acquisition acquisition) {
		Decision[] decision = new Decision[1];
		this.held.compute(acquisition.key(), (key, state) -> {
			long now = this.clock.nanos();
			if (state == null) {
				if (!isEmpty(overflow(key, acquisition.limit()), now) || this.held.mappingCount() >= this.maximumSize) {
					decision[0] = onOverflow(key, acquisition, now, true);
					return null;
				}
				state = acquisition.limit().newState();
			}
			LimiterState current = current(state, acquisition.limit(), now);
			decision[0] = acquire(current, acquisition, now);
			return isEmpty(current, now) ? null : current;
		});
		return decision[0];
	}

	Decision release(Acquisition acquisition) {
		Decision[] decision = new Decision[1];
		this.held.compute(acquisition.key(), (key, state) -> {
			long now = this.clock.nanos();
			long cost = acquisition.cost() - useOrphans(key, acquisition.cost());
			if (cost == 0) {
				// Used up on slots a reset forgot: nothing taken since is freed.
				decision[0] = peek((state != null) ? current(state, acquisition.limit(), now) : null, acquisition, now);
				return state;
			}
			Acquisition freed = (cost == acquisition.cost()) ? acquisition
					: new Acquisition(acquisition.limitId(), acquisition.limit(), key, cost);
			if (state == null) {
				// Acquired on the overflow counter (the key is never in both places).
				decision[0] = onOverflow(key, freed, now, false);
				return null;
			}
			LimiterState current = current(state, freed.limit(), now);
			decision[0] = release(current, freed, now);
			return isEmpty(current, now) ? null : current;
		});
		return decision[0];
	}

	Decision check(Acquisition acquisition) {
		long now = this.clock.nanos();
		LimiterState state = this.held.get(acquisition.key());
		LimiterState read = (state != null) ? state : overflow(acquisition.key(), acquisition.limit());
		Decision decision = read.check(now, acquisition.cost());
		// A state moved meanwhile (a plan or a runtime change) reads as nothing held, as a new one would.
		return (decision != null) ? decision : acquisition.limit().newState().check(now, acquisition.cost());
	}

	Decision peek(Acquisition acquisition) {
		long now = this.clock.nanos();
		LimiterState state = this.held.get(acquisition.key());
		Decision decision = (state != null) ? state.peek(now) : overflow(acquisition.key(), acquisition.limit()).peek(now);
		return (decision != null) ? decision : acquisition.limit().newState().peek(now);
	}

	void reset(String key) {
		this.held.computeIfPresent(key, (k, state) -> {
			Decision peek = state.peek(this.clock.nanos());
			long inFlight = (peek != null) ? state.limit().limit() - peek.remaining() : 0;
			if (inFlight > 0) {
				this.orphans.merge(k, inFlight, Long::sum);
			}
			return null;
		});
	}

	/** Uses up to {@code cost} of a key's orphaned slots; answers how many. Called under the key's lock. */
	private long useOrphans(String key, long cost) {
		Long orphaned = this.orphans.get(key);
		if (orphaned == null) {
			return 0;
		}
		long used = Math.min(orphaned, cost);
		if (used == orphaned) {
			this.orphans.remove(key);
		}
		else {
			this.orphans.put(key, orphaned - used);
		}
		return used;
	}

	private Decision peek(@Nullable LimiterState state, Acquisition acquisition, long now) {
		Decision decision = (state != null) ? state.peek(now) : null;
		return (decision != null) ? decision : acquisition.limit().newState().peek(now);
	}

	long size() {
		return this.held.mappingCount();
	}

	/** Acquires or releases on the key's overflow counter, which another key's request may move meanwhile. */
	private Decision onOverflow(String key, Acquisition acquisition, long now, boolean acquire) {
		while (true) {
			LimiterState shared = overflow(key, acquisition.limit());
			Decision decision = acquire ? shared.tryAcquire(now, acquisition.cost(), 0)
					: shared.release(now, acquisition.cost());
			if (decision != null) {
				return decision;
			}
		}
	}

	private static Decision acquire(LimiterState state, Acquisition acquisition, long now) {
		Decision decision = state.tryAcquire(now, acquisition.cost(), 0);
		if (decision == null) {
			throw new IllegalStateException("a concurrency state was retired under its key's lock");
		}
		return decision;
	}

	private static Decision release(LimiterState state, Acquisition acquisition, long now) {
		Decision decision = state.release(now, acquisition.cost());
		if (decision == null) {
			throw new IllegalStateException("a concurrency state was retired under its key's lock");
		}
		return decision;
	}

	/** The state under the limit asked for: itself, or its successor (the slots held carried over). */
	private static LimiterState current(LimiterState state, Limit limit, long now) {
		if (state.limit().equals(limit)) {
			return state;
		}
		LimiterState next = state.moveTo(limit, now);
		return (next != null) ? next : limit.newState();
	}

	private static boolean isEmpty(LimiterState state, long now) {
		Decision peek = state.peek(now);
		return peek == null || peek.remaining() == state.limit().limit();
	}

	/** The key's overflow counter, moved to the limit asked for; changed only under some key's lock. */
	private LimiterState overflow(String key, Limit limit) {
		int index = index(key);
		while (true) {
			LimiterState counter = this.overflow.get(index);
			if (counter == null) {
				this.overflow.compareAndSet(index, null, limit.newState());
				continue;
			}
			if (counter.limit().equals(limit)) {
				return counter;
			}
			LimiterState next = counter.moveTo(limit, this.clock.nanos());
			if (next != null && this.overflow.compareAndSet(index, counter, next)) {
				return next;
			}
		}
	}

	private int index(String key) {
		long h = this.seed;
		for (int i = 0; i < key.length(); i++) {
			h = (h ^ key.charAt(i)) * 0x9E3779B97F4A7C15L;
			h ^= (h >>> 29);
		}
		h ^= (h >>> 32);
		return (int) (h & (CaffeineRateLimitStore.OVERFLOW_BUDGETS - 1));
	}

}
