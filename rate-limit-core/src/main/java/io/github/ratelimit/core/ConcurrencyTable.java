package io.github.ratelimit.core;

import java.util.concurrent.ConcurrentHashMap;

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
 * A reset forgets a key's requests in flight: the key gets its whole limit at once, and the end of a
 * request the reset forgot frees nothing (as on Redis, where each request's lease is its own). Each
 * admitted acquisition is remembered, by identity, with the generation of the key's counter it was
 * admitted by (or as taken from an overflow counter) until its release: a release frees a slot only in
 * the counter that admitted it. A request that never ends holds its slot until a reset, no longer.
 * <p>
 * Thread-safe and exact: every acquisition, release and reset of a key runs under that key's lock.
 */
final class ConcurrencyTable {

	/** Marks an acquisition admitted by an overflow counter. */
	private static final Object OVERFLOW = new Object();

	private final long maximumSize;

	private final RateLimitClock clock;

	private final ConcurrentHashMap<String, Counter> held = new ConcurrentHashMap<>();

	/** The acquisitions admitted and not yet released: their counter's generation, or {@link #OVERFLOW}. */
	private final ConcurrentHashMap<Identity, Object> admitted = new ConcurrentHashMap<>();

	/** The overflow counters; one changes only under the lock of some key it judges. */
	private final OverflowBudgets overflow;

	/** A key's counter and its generation, made when the key is first tracked and kept through limit changes. */
	private record Counter(LimiterState state, Object generation) {

		/** This counter with its state as now (itself unless the state moved to another limit). */
		Counter with(LimiterState current) {
			return (current == this.state) ? this : new Counter(current, this.generation);
		}

	}

	/** An acquisition by identity: one per request, the same object at its release. */
	private record Identity(Acquisition acquisition) {

		@Override
		public boolean equals(Object other) {
			return other instanceof Identity identity && identity.acquisition == this.acquisition;
		}

		@Override
		public int hashCode() {
			return System.identityHashCode(this.acquisition);
		}

	}

	ConcurrencyTable(long maximumSize, RateLimitClock clock, long seed) {
		this.maximumSize = maximumSize;
		this.clock = clock;
		this.overflow = new OverflowBudgets(seed, clock);
	}

	Decision tryAcquire(Acquisition acquisition) {
		Decision[] decision = new Decision[1];
		this.held.compute(acquisition.key(), (key, counter) -> {
			long now = this.clock.nanos();
			if (counter == null) {
				if (!isEmpty(this.overflow.of(key, acquisition.limit()), now) || this.held.mappingCount() >= this.maximumSize) {
					decision[0] = onOverflow(key, acquisition, now, true);
					if (decision[0].isAllowed()) {
						this.admitted.put(new Identity(acquisition), OVERFLOW);
					}
					return null;
				}
				counter = new Counter(acquisition.limit().newState(), new Object());
			}
			LimiterState current = current(counter.state(), acquisition.limit(), now);
			decision[0] = inForce(current.tryAcquire(now, acquisition.cost(), 0));
			if (decision[0].isAllowed()) {
				this.admitted.put(new Identity(acquisition), counter.generation());
			}
			return isEmpty(current, now) ? null : counter.with(current);
		});
		return decision[0];
	}

	Decision release(Acquisition acquisition) {
		Decision[] decision = new Decision[1];
		this.held.compute(acquisition.key(), (key, counter) -> {
			long now = this.clock.nanos();
			Object generation = this.admitted.remove(new Identity(acquisition));
			if (generation == OVERFLOW) {
				decision[0] = onOverflow(key, acquisition, now, false);
				return counter;
			}
			if (counter == null || generation != counter.generation()) {
				// Admitted by a counter a reset has forgotten (or never admitted): nothing of today's to free.
				decision[0] = peek((counter != null) ? counter.state() : null, acquisition, now);
				return counter;
			}
			LimiterState current = current(counter.state(), acquisition.limit(), now);
			decision[0] = inForce(current.release(now, acquisition.cost()));
			return isEmpty(current, now) ? null : counter.with(current);
		});
		return decision[0];
	}

	Decision check(Acquisition acquisition) {
		long now = this.clock.nanos();
		Counter counter = this.held.get(acquisition.key());
		LimiterState read = (counter != null) ? counter.state() : this.overflow.of(acquisition.key(), acquisition.limit());
		Decision decision = read.check(now, acquisition.cost());
		// A state moved meanwhile (a plan or a runtime change) reads as nothing held, as a new one would.
		return (decision != null) ? decision : acquisition.limit().newState().check(now, acquisition.cost());
	}

	Decision peek(Acquisition acquisition) {
		long now = this.clock.nanos();
		Counter counter = this.held.get(acquisition.key());
		return peek((counter != null) ? counter.state() : this.overflow.of(acquisition.key(), acquisition.limit()),
				acquisition, now);
	}

	void reset(String key) {
		// Its requests in flight stay admitted by the generation removed here: their ends free nothing.
		this.held.remove(key);
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
			LimiterState shared = this.overflow.of(key, acquisition.limit());
			Decision decision = acquire ? shared.tryAcquire(now, acquisition.cost(), 0)
					: shared.release(now, acquisition.cost());
			if (decision != null) {
				return decision;
			}
		}
	}

	/** The decision of a key's own counter, which nothing retires while the key's lock is held. */
	private static Decision inForce(@Nullable Decision decision) {
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

}
