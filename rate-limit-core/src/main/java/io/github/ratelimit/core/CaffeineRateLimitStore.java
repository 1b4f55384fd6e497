package io.github.ratelimit.core;

import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;

import com.github.benmanes.caffeine.cache.Policy;

import org.jspecify.annotations.Nullable;

/**
 * An in-process store: one {@code LimiterState} per (limit, key), in one table per limit (a policy,
 * or an annotated endpoint), each table bounded by {@code maximumSize}. Thread-safe and exact within
 * one JVM.
 * <p>
 * <b>Expiry never changes a decision</b>: a state expires only after it has been left alone for as
 * long as its limit needs to become fresh again (a token bucket: the time to refill the whole burst;
 * in delay mode, also the wait it may reserve ahead), plus a second of slack. Reads are quiet: a
 * decision on a tracked key reads its entry without Caffeine's bookkeeping of reads (no read buffer,
 * no maintenance, no expiry recomputed) and decides at the time that read took, so a decision costs one
 * map lookup and one clock read. An entry is given more time only when it has less left than the
 * operation may need (its idle time, the wait, half the slack): then by the whole slack plus a
 * sixteenth of the idle time, so a busy key's entry is extended at most about twice a second.
 * <p>
 * <b>Floods never lift a lockout.</b> A table never evicts a state to make room: a state leaves only
 * by expiring, that is once it equals a fresh one, so a locked-out key keeps its lockout however many
 * other keys arrive, and a flood on one limit never touches another limit's table. When a table is
 * full, a key it does not track is judged by one of {@value #OVERFLOW_BUDGETS} overflow budgets of
 * that limit, chosen by a hash of the key seeded at random per store: every untracked key that hashes
 * there shares that budget, so the budget has seen at least all of the key's own requests and may
 * over-count, never under-count (a count-min sketch of one row whose cells are states of the limit's
 * own algorithm). A key is tracked on its own only once its overflow budget is fresh, which implies
 * its own history would be fresh too: a flood cannot hide a brute force, it only makes the keys that
 * arrive during it share budgets (and, under a heavy flood, wait). Memory is bounded by
 * {@code maximumSize} states plus {@value #OVERFLOW_BUDGETS} per limit.
 * <p>
 * Concurrency: a thread may still hold a state that Caffeine has just expired (its read of the entry
 * raced with the removal). So that such a thread and the threads that come after it never spend two
 * different budgets, an expired state is kept in a weak-valued side map, and the state created next
 * for that key is the very same object when anybody still holds it (so a table may exceed its bound by
 * the number of threads in that race). Once nobody does, the garbage collector clears it and the key
 * starts afresh, as it should. Whether a key is tracked or judged by its overflow budget is decided
 * atomically per key, together with the first decision of an overflowed key.
 * <p>
 * <b>A key's limit may change</b> (its plan, or a change at run time): the acquisition carries the limit
 * in force, and a state of another limit is swapped, atomically for its key, for its successor
 * ({@code LimiterState.moveTo}), which keeps what was spent. A thread still holding the retired state
 * is answered {@code null} by it and asks the table again, so no token is spent twice or lost.
 * <p>
 * <b>Concurrency limits</b> ({@link Algorithm#CONCURRENCY}) have tables of their own
 * ({@code ConcurrencyTable}): an exact count of requests in flight per key, dropped when its last
 * request ends (never by age), bounded by {@code maximumSize} keys with overflow counters as above.
 */
public final class CaffeineRateLimitStore implements RateLimitStore {


	/*
	 * Its parts, package-private: this class decides a tracked key quietly and owns the tables; a RateTable
	 * per rate limit holds that limit's states and takes every other path; IdleUntilFresh says how long an
	 * entry is kept; OverflowBudgets are a table's shared budgets; a ConcurrencyTable per concurrency limit
	 * counts requests in flight; a BanTable per limit whose acquisitions ban holds its bans.
	 */

	/**
	 * The most keys a store tracks per limit when nobody says otherwise (the starter's
	 * {@code rate-limit.store.caffeine.maximum-size}, the Redis store's local fallback): about 160 MB
	 * per full limit.
	 */
	public static final long DEFAULT_MAXIMUM_SIZE = 1_000_000;

	/** The overflow budgets per limit: keys a full table cannot track share them. */
	static final int OVERFLOW_BUDGETS = 256;

	private final long maximumSize;

	private final RateLimitClock clock;

	private final Executor executor;

	private final long seed = new SecureRandom().nextLong();

	private final ConcurrentMap<String, RateTable> tables = new ConcurrentHashMap<>();

	/** The bans of the limits whose acquisitions carry one ({@link Ban}), by limit id. */
	private final ConcurrentMap<String, BanTable> banTables = new ConcurrentHashMap<>();

	private final ConcurrentMap<String, ConcurrencyTable> concurrencyTables = new ConcurrentHashMap<>();

	/**
	 * Creates a store.
	 * @param maximumSize the most keys tracked at once per limit; positive
	 * @param clock the time source of limiters and of expiry
	 */
	public CaffeineRateLimitStore(long maximumSize, RateLimitClock clock) {
		this(maximumSize, clock, ForkJoinPool.commonPool());
	}

	CaffeineRateLimitStore(long maximumSize, RateLimitClock clock, Executor executor) {
		if (maximumSize <= 0) {
			throw new IllegalArgumentException("maximum size must be positive, was " + maximumSize);
		}
		this.maximumSize = maximumSize;
		this.clock = clock;
		this.executor = executor;
	}

	/**
	 * Decides on a tracked key in one quiet read and one operation on its state; anything else (a key
	 * not tracked, a state of another limit, an entry to be kept longer, a retired state) takes the full
	 * path. Small on purpose, so that it inlines into the caller and the acquisition need not be
	 * allocated; the slow path takes its fields, never the acquisition itself.
	 */
	@Override
	public Decision tryAcquire(Acquisition acquisition) {
		Limit limit = acquisition.limit();
		if (limit.algorithm() == Algorithm.CONCURRENCY) {
			return concurrencyTable(acquisition.limitId()).tryAcquire(acquisition);
		}
		RateTable table = table(acquisition.limitId());
		String key = acquisition.key();
		long cost = acquisition.cost();
		long maxWaitNanos = acquisition.maxWaitNanos();
		// A quiet read, whose snapshot time is the decision's clock (one clock read).
		Policy.CacheEntry<String, LimiterState> entry = table.quietEntry(key, limit, maxWaitNanos);
		if (entry != null) {
			Decision decision = entry.getValue().tryAcquire(entry.snapshotAt(), cost, maxWaitNanos);
			if (decision != null) {
				return decision;
			}
		}
		return table.decide(key, limit, cost, maxWaitNanos, true, RateTable.ACQUIRE);
	}

	/**
	 * Checks a budget without taking anything: one read, no write, and no state created for a key the
	 * table does not track (a check never makes the store grow). Such a key reads as its overflow
	 * budget, which is what would judge it unless it is fresh (and then a new state would answer alike).
	 */
	@Override
	public Decision check(Acquisition acquisition) {
		if (isConcurrency(acquisition)) {
			return concurrencyTable(acquisition.limitId()).check(acquisition);
		}
		return table(acquisition.limitId()).check(acquisition);
	}

	@Override
	public Decision release(Acquisition acquisition) {
		if (isConcurrency(acquisition)) {
			return concurrencyTable(acquisition.limitId()).release(acquisition);
		}
		return table(acquisition.limitId()).decide(acquisition.key(), acquisition.limit(), acquisition.cost(),
				acquisition.maxWaitNanos(), false, RateTable.RELEASE);
	}

	/**
	 * Takes the tokens of several budgets, all or nothing, and marks each where it took them, so that a
	 * {@link #giveBack(Receipt)} returns exactly what the attempt still holds. When one budget rejects,
	 * the others are given back at once, by their receipts (and hold nothing).
	 */
	@Override
	public List<Receipt> admitAll(List<Acquisition> acquisitions) {
		if (acquisitions.size() == 1) {
			return List.of(admit(acquisitions.get(0)));
		}
		List<Receipt> receipts = new ArrayList<>(acquisitions.size());
		for (Acquisition acquisition : acquisitions) {
			Receipt receipt = admit(acquisition);
			receipts.add(receipt);
			if (!receipt.decision().isAllowed()) {
				return refused(acquisitions, receipts);
			}
		}
		return receipts;
	}

	/** A request one budget rejected: what the others took is given back; those not asked are read, for headers. */
	private List<Receipt> refused(List<Acquisition> acquisitions, List<Receipt> asked) {
		List<Receipt> refused = new ArrayList<>(acquisitions.size());
		for (int i = 0; i < acquisitions.size(); i++) {
			Acquisition acquisition = acquisitions.get(i);
			Receipt receipt = (i < asked.size()) ? asked.get(i) : null;
			if (receipt != null && !receipt.decision().isAllowed()) {
				refused.add(receipt);
				continue;
			}
			// Not asked: read for headers. Given back: how the budget reads after, else as it reads now.
			Decision decision = (receipt != null) ? giveBack(receipt) : check(acquisition);
			refused.add(new Receipt(acquisition, (decision != null) ? decision : peek(acquisition), Receipt.NO_MARK,
					Receipt.Place.NOWHERE));
		}
		return refused;
	}

	/**
	 * Admits an acquisition whose key may be banned ({@link Ban}): a banned key is rejected without asking
	 * its budget; a rejection of its budget counts towards a ban, and the one that starts it answers with it.
	 */
	private Receipt admitUnlessBanned(Acquisition acquisition, Ban ban) {
		BanTable bans = this.banTables.computeIfAbsent(acquisition.limitId(),
				(id) -> new BanTable(this.maximumSize, this.clock.nanos()));
		long bannedNanos = bans.bannedNanos(acquisition.key(), this.clock.nanos());
		if (bannedNanos > 0) {
			return banned(acquisition, bannedNanos, Receipt.NO_MARK);
		}
		Receipt receipt = admitBudget(acquisition);
		if (receipt.decision().isAllowed() || !bans.strike(acquisition.key(), this.clock.nanos(), ban)) {
			return receipt;
		}
		return banned(acquisition, ban.durationNanos(), Receipt.BAN_STARTED);
	}

	/** The receipt of an acquisition of a banned key: rejected for the rest of the ban, nothing taken. */
	private static Receipt banned(Acquisition acquisition, long restNanos, long mark) {
		long limit = acquisition.limit().limit();
		return new Receipt(acquisition, Decision.rejected(limit, 0, restNanos, restNanos, restNanos), mark,
				Receipt.Place.BANNED);
	}

	private Receipt admit(Acquisition acquisition) {
		Ban ban = acquisition.ban();
		return (ban != null) ? admitUnlessBanned(acquisition, ban) : admitBudget(acquisition);
	}

	/** As {@link #tryAcquire}, with the mark of what was taken: the same quiet fast path for a tracked key. */
	private Receipt admitBudget(Acquisition acquisition) {
		Limit limit = acquisition.limit();
		if (limit.algorithm() == Algorithm.CONCURRENCY) {
			return new Receipt(acquisition, tryAcquire(acquisition), Receipt.NO_MARK, Receipt.Place.STORE);
		}
		RateTable table = table(acquisition.limitId());
		Policy.CacheEntry<String, LimiterState> entry = table.quietEntry(acquisition.key(), limit, acquisition.maxWaitNanos());
		if (entry != null) {
			Decision decision = entry.getValue().tryAcquire(entry.snapshotAt(), acquisition.cost(), acquisition.maxWaitNanos());
			if (decision != null) {
				return receipt(acquisition, decision, entry.getValue(), entry.snapshotAt());
			}
		}
		Receipt[] admitted = new Receipt[1];
		table.decide(acquisition.key(), limit, acquisition.cost(), acquisition.maxWaitNanos(), true,
				(state, now, cost, maxWaitNanos) -> {
					Decision decision = state.tryAcquire(now, cost, maxWaitNanos);
					if (decision != null) {
						admitted[0] = receipt(acquisition, decision, state, now);
					}
					return decision;
				});
		return admitted[0];
	}

	private static Receipt receipt(Acquisition acquisition, Decision decision, LimiterState state, long now) {
		return new Receipt(acquisition, decision, decision.isAllowed() ? state.mark(now, decision) : Receipt.NO_MARK,
				Receipt.Place.STORE);
	}

	/**
	 * Gives back what an admitted acquisition still holds, in the state that holds the key now (tracked,
	 * just expired, or its overflow budget), without moving that state to the receipt's limit: a plan
	 * or a runtime change made since stays in force. A key whose state has expired holds nothing.
	 */
	@Override
	public @Nullable Decision giveBack(Receipt receipt) {
		if (!receipt.holdsCost()) {
			return null;
		}
		Acquisition acquisition = receipt.acquisition();
		if (isConcurrency(acquisition) || receipt.mark() == Receipt.NO_MARK) {
			return release(acquisition);
		}
		RateTable table = this.tables.get(acquisition.limitId());
		return (table != null) ? table.giveBack(acquisition, receipt.mark()) : null;
	}

	/**
	 * Reads a key's state without changing it (nor its expiry); a key the table does not track reads
	 * as the overflow budget that would judge it.
	 * @param acquisition the budget (its cost is ignored)
	 * @return the state as a request of cost 0 would see it
	 */
	@Override
	public Decision peek(Acquisition acquisition) {
		if (isConcurrency(acquisition)) {
			return concurrencyTable(acquisition.limitId()).peek(acquisition);
		}
		return table(acquisition.limitId()).peek(acquisition);
	}

	/**
	 * Makes a key's budget whole: forgets its state and makes its overflow budget whole (for every key that
	 * shares it), which judges a key the table does not track, and a forgotten one while the table is full:
	 * an operator unlocking a user during a flood must not be answered by a budget still spent. Lifts the
	 * key's ban too.
	 */
	@Override
	public void reset(String limitId, String key) {
		ConcurrencyTable concurrency = this.concurrencyTables.get(limitId);
		if (concurrency != null) {
			concurrency.reset(key);
		}
		RateTable table = this.tables.get(limitId);
		if (table != null) {
			table.reset(key);
		}
		BanTable bans = this.banTables.get(limitId);
		if (bans != null) {
			bans.reset(key);
		}
	}

	@Override
	public boolean bans() {
		return true;
	}

	@Override
	public long bannedNanos(Acquisition acquisition) {
		BanTable bans = this.banTables.get(acquisition.limitId());
		return (bans != null) ? bans.bannedNanos(acquisition.key(), this.clock.nanos()) : 0;
	}

	/**
	 * Forgets every state, the overflow budgets included, of every limit: for tests. A decision running
	 * at the same time may still spend from a state just forgotten.
	 */
	@Override
	public void resetAll() {
		this.tables.clear();
		this.banTables.clear();
		// Concurrency slots too; a request still in flight then releases a key the table no longer holds,
		// which at most frees an overflow counter early, as after a reset of that one key.
		this.concurrencyTables.clear();
	}

	/**
	 * Returns how many keys are tracked, over all limits.
	 * @return the number of states held (overflow budgets not included)
	 */
	public long size() {
		return this.tables.values().stream().mapToLong(RateTable::size).sum()
				+ this.concurrencyTables.values().stream().mapToLong(ConcurrencyTable::size).sum();
	}

	/**
	 * Returns how many keys one limit tracks.
	 * @param limitId the limit
	 * @return the number of its states held, at most {@code maximumSize} (but for the race described
	 * in the class description)
	 */
	public long size(String limitId) {
		RateTable table = this.tables.get(limitId);
		ConcurrencyTable concurrency = this.concurrencyTables.get(limitId);
		return ((table != null) ? table.size() : 0) + ((concurrency != null) ? concurrency.size() : 0);
	}

	/**
	 * Returns how many decisions of one limit were made by its overflow budgets, because its table was
	 * full.
	 * @param limitId the limit
	 * @return the count since start
	 */
	public long overflowDecisions(String limitId) {
		RateTable table = this.tables.get(limitId);
		return (table != null) ? table.overflowDecisions() : 0;
	}

	/** How many keys one limit's ban table holds (bans and counts towards them): for tests. */
	long banTableSize(String limitId) {
		BanTable bans = this.banTables.get(limitId);
		return (bans != null) ? bans.size() : 0;
	}

	void cleanUp() {
		this.tables.values().forEach(RateTable::cleanUp);
	}

	private static boolean isConcurrency(Acquisition acquisition) {
		return acquisition.limit().algorithm() == Algorithm.CONCURRENCY;
	}

	private ConcurrencyTable concurrencyTable(String limitId) {
		ConcurrencyTable table = this.concurrencyTables.get(limitId);
		return (table != null) ? table
				: this.concurrencyTables.computeIfAbsent(limitId,
						(id) -> new ConcurrencyTable(this.maximumSize, this.clock, this.seed));
	}

	private RateTable table(String limitId) {
		RateTable table = this.tables.get(limitId);
		return (table != null) ? table : this.tables.computeIfAbsent(limitId,
				(id) -> new RateTable(id, this.maximumSize, this.clock, this.executor, this.seed));
	}
}
