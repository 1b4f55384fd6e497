package io.github.ratelimit.core;

import java.util.concurrent.atomic.AtomicReferenceArray;

import org.jspecify.annotations.Nullable;

/**
 * The {@value CaffeineRateLimitStore#OVERFLOW_BUDGETS} overflow budgets of one limit's table (a rate's
 * {@code RateTable} or a {@code ConcurrencyTable}): the states, of the limit's own algorithm, that judge
 * the keys a full table does not track. A key's budget is chosen by a hash seeded per store, so that
 * clients cannot choose which keys share a budget; every untracked key that hashes there shares it, so
 * it may over-count, never under-count. Thread-safe: each slot changes by compare-and-set only.
 */
final class OverflowBudgets {

	private final AtomicReferenceArray<LimiterState> budgets = new AtomicReferenceArray<>(
			CaffeineRateLimitStore.OVERFLOW_BUDGETS);

	private final long seed;

	private final RateLimitClock clock;

	OverflowBudgets(long seed, RateLimitClock clock) {
		this.seed = seed;
		this.clock = clock;
	}

	/**
	 * Returns the budget that judges a key, under the limit asked for: created when the slot is empty,
	 * moved to that limit (what was spent carried over) when it holds another. Only the thread that
	 * retires a budget swaps in its successor; a thread that meets the budget just retired reads the slot
	 * again, which holds the successor at once (or a budget a reset made whole meanwhile, then moved in its
	 * turn). The budget returned may still be retired by another thread's move before it is used: its
	 * operations then answer {@code null}, and the caller asks again.
	 */
	LimiterState of(String key, Limit limit) {
		int index = index(key);
		while (true) {
			LimiterState budget = this.budgets.get(index);
			if (budget == null) {
				this.budgets.compareAndSet(index, null, limit.newState());
				continue;
			}
			if (budget.limit().equals(limit)) {
				return budget;
			}
			LimiterState next = budget.moveTo(limit, this.clock.nanos());
			if (next != null && this.budgets.compareAndSet(index, budget, next)) {
				return next;
			}
		}
	}

	/** The budget that judges a key as it is, not moved; {@code null} when none was needed yet. */
	@Nullable LimiterState at(String key) {
		return this.budgets.get(index(key));
	}

	/** Makes the budget that judges a key whole (for every key that shares it). */
	void reset(String key) {
		int index = index(key);
		while (true) {
			LimiterState budget = this.budgets.get(index);
			if (budget == null || this.budgets.compareAndSet(index, budget, budget.limit().newState())) {
				return;
			}
		}
	}

	/** A hash seeded per store, so that clients cannot choose which keys share a budget. */
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
