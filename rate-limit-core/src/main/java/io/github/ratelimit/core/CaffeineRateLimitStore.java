package io.github.ratelimit.core;

import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
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

	/**
	 * The most keys a store tracks per limit when nobody says otherwise (the starter's
	 * {@code rate-limit.store.caffeine.maximum-size}, the Redis store's local fallback): about 160 MB
	 * per full limit.
	 */
	public static final long DEFAULT_MAXIMUM_SIZE = 1_000_000;

	/** The overflow budgets per limit: keys a full table cannot track share them. */
	static final int OVERFLOW_BUDGETS = 256;

	private static final long SLACK_NANOS = 1_000_000_000L;

	/** The longest an entry is kept for an operation, about 36 years (Caffeine's range ends at 2^62 ns). */
	private static final long HORIZON_NANOS = 1L << 60;

	/** A full table tries to expire states at most once per millisecond of the store's clock. */
	private static final long CLEAN_UP_INTERVAL_NANOS = 1_000_000L;

	private static final System.Logger logger = System.getLogger(CaffeineRateLimitStore.class.getName());

	private final long maximumSize;

	private final RateLimitClock clock;

	private final Executor executor;

	private final long seed = new SecureRandom().nextLong();

	private final ConcurrentMap<String, Table> tables = new ConcurrentHashMap<>();

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

	private static final Operation ACQUIRE = (state, now, cost, maxWaitNanos) -> state.tryAcquire(now, cost,
			maxWaitNanos);

	private static final Operation RELEASE = (state, now, cost, maxWaitNanos) -> state.release(now, cost);

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
		Table table = table(acquisition.limitId());
		String key = acquisition.key();
		long cost = acquisition.cost();
		long maxWaitNanos = acquisition.maxWaitNanos();
		// A quiet read: no read buffer, no maintenance, no expiry recomputed. Its snapshot time is the
		// decision's clock (one clock read), and its expiry tells whether the entry must be kept longer.
		Policy.CacheEntry<String, LimiterState> entry = table.policy.getEntryIfPresentQuietly(key);
		if (entry != null) {
			LimiterState state = entry.getValue();
			long now = entry.snapshotAt();
			if (state.limit() == limit && entry.expiresAt() - now >= neededNanos(limit, maxWaitNanos)) {
				Decision decision = state.tryAcquire(now, cost, maxWaitNanos);
				if (decision != null) {
					return decision;
				}
			}
		}
		return decide(table, key, limit, cost, maxWaitNanos, true, ACQUIRE);
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
		Table table = table(acquisition.limitId());
		String key = acquisition.key();
		while (true) {
			// Quiet: a check changes no state, so it never needs the entry kept longer.
			Policy.CacheEntry<String, LimiterState> entry = table.policy.getEntryIfPresentQuietly(key);
			LimiterState state;
			long now;
			if (entry != null) {
				// Of another limit (a plan or a runtime change): moved first, as an acquisition would.
				LimiterState held = entry.getValue();
				state = table.current(key, held, acquisition.limit(), this.clock);
				now = (state != held) ? this.clock.nanos() : entry.snapshotAt();
			}
			else {
				// Expired while another thread still holds it: that state is the key's budget.
				state = table.removedButReachable.getIfPresent(key);
				if (state == null) {
					state = table.overflow(key, acquisition.limit());
				}
				now = this.clock.nanos();
			}
			Decision decision = state.check(now, acquisition.cost());
			if (decision != null) {
				return decision;
			}
		}
	}

	@Override
	public Decision release(Acquisition acquisition) {
		if (isConcurrency(acquisition)) {
			return concurrencyTable(acquisition.limitId()).release(acquisition);
		}
		return decide(table(acquisition.limitId()), acquisition.key(), acquisition.limit(), acquisition.cost(),
				acquisition.maxWaitNanos(), false, RELEASE);
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
			Decision decision;
			if (receipt == null) {
				decision = check(acquisition);
			}
			else {
				Decision after = giveBack(receipt);
				decision = (after != null) ? after : peek(acquisition);
			}
			refused.add(new Receipt(acquisition, decision, Receipt.NO_MARK, Receipt.Place.NOWHERE));
		}
		return refused;
	}

	/** As {@link #tryAcquire}, with the mark of what was taken: the same quiet fast path for a tracked key. */
	private Receipt admit(Acquisition acquisition) {
		Limit limit = acquisition.limit();
		if (limit.algorithm() == Algorithm.CONCURRENCY) {
			return new Receipt(acquisition, tryAcquire(acquisition), Receipt.NO_MARK, Receipt.Place.STORE);
		}
		Table table = table(acquisition.limitId());
		Policy.CacheEntry<String, LimiterState> entry = table.policy.getEntryIfPresentQuietly(acquisition.key());
		if (entry != null) {
			LimiterState state = entry.getValue();
			long now = entry.snapshotAt();
			if (state.limit() == limit && entry.expiresAt() - now >= neededNanos(limit, acquisition.maxWaitNanos())) {
				Decision decision = state.tryAcquire(now, acquisition.cost(), acquisition.maxWaitNanos());
				if (decision != null) {
					return receipt(acquisition, decision, state, now);
				}
			}
		}
		Receipt[] admitted = new Receipt[1];
		decide(table, acquisition.key(), limit, acquisition.cost(), acquisition.maxWaitNanos(), true,
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
		Table table = this.tables.get(acquisition.limitId());
		if (table == null) {
			return null;
		}
		String key = acquisition.key();
		while (true) {
			LimiterState state = table.states.policy().getIfPresentQuietly(key);
			if (state == null) {
				state = table.removedButReachable.getIfPresent(key);
			}
			if (state == null) {
				state = table.overflow.get(table.index(key));
			}
			if (state == null) {
				return null;
			}
			// null: retired by a move meanwhile; its successor holds what was spent.
			Decision decision = state.giveBack(this.clock.nanos(), acquisition.cost(), receipt.mark(),
					acquisition.limit());
			if (decision != null) {
				return decision;
			}
		}
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
		Table table = table(acquisition.limitId());
		while (true) {
			LimiterState state = table.states.policy().getIfPresentQuietly(acquisition.key());
			Decision decision = (state != null ? state : table.overflow(acquisition.key(), acquisition.limit()))
				.peek(this.clock.nanos());
			if (decision != null) {
				return decision;
			}
		}
	}

	/**
	 * Makes a key's budget whole: forgets its state, or, for a key the table does not track (judged by its
	 * overflow budget, as {@link #peek} reads it), makes that overflow budget whole, for every key that
	 * shares it: an operator unlocking a user during a flood must not be answered by a budget still spent.
	 */
	@Override
	public void reset(String limitId, String key) {
		ConcurrencyTable concurrency = this.concurrencyTables.get(limitId);
		if (concurrency != null) {
			concurrency.reset(key);
		}
		Table table = this.tables.get(limitId);
		if (table == null) {
			return;
		}
		if (table.states.asMap().remove(key) != null) {
			table.tracked.decrementAndGet();
		}
		else {
			table.resetOverflow(key);
		}
	}

	/**
	 * Forgets every state, the overflow budgets included, of every limit: for tests. A decision running
	 * at the same time may still spend from a state just forgotten.
	 */
	@Override
	public void resetAll() {
		this.tables.clear();
		// Concurrency slots too; a request still in flight then releases a key the table no longer holds,
		// which at most frees an overflow counter early, as after a reset of that one key.
		this.concurrencyTables.clear();
	}

	/**
	 * Returns how many keys are tracked, over all limits.
	 * @return the number of states held (overflow budgets not included)
	 */
	public long size() {
		long size = 0;
		for (Table table : this.tables.values()) {
			size += table.tracked.get();
		}
		for (ConcurrencyTable table : this.concurrencyTables.values()) {
			size += table.size();
		}
		return size;
	}

	/**
	 * Returns how many keys one limit tracks.
	 * @param limitId the limit
	 * @return the number of its states held, at most {@code maximumSize} (but for the race described
	 * in the class description)
	 */
	public long size(String limitId) {
		Table table = this.tables.get(limitId);
		ConcurrencyTable concurrency = this.concurrencyTables.get(limitId);
		return ((table != null) ? table.tracked.get() : 0) + ((concurrency != null) ? concurrency.size() : 0);
	}

	/**
	 * Returns how many decisions of one limit were made by its overflow budgets, because its table was
	 * full.
	 * @param limitId the limit
	 * @return the count since start
	 */
	public long overflowDecisions(String limitId) {
		Table table = this.tables.get(limitId);
		return (table != null) ? table.overflowDecisions.sum() : 0;
	}

	/**
	 * Returns the most keys tracked at once per limit.
	 * @return the bound
	 */
	long maximumSize() {
		return this.maximumSize;
	}

	void cleanUp() {
		this.tables.values().forEach((table) -> table.states.cleanUp());
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

	private Table table(String limitId) {
		Table table = this.tables.get(limitId);
		return (table != null) ? table : this.tables.computeIfAbsent(limitId, Table::new);
	}

	/**
	 * Applies an operation to the key's state: the tracked one; else a new one when the table has room
	 * and the key's overflow budget is fresh (only when {@code mayTrack}); else the overflow budget.
	 */
	private Decision decide(Table table, String key, Limit limit, long cost, long maxWaitNanos, boolean mayTrack,
			Operation op) {
		while (true) {
			// null: the state met was retired by a change of the key's limit, and its successor decides;
			// or its entry expired before it could be kept longer, and the next attempt finds it gone.
			Decision decision = decideOnce(table, key, limit, cost, maxWaitNanos, mayTrack, op);
			if (decision != null) {
				return decision;
			}
		}
	}

	private @Nullable Decision decideOnce(Table table, String key, Limit limit, long cost, long maxWaitNanos,
			boolean mayTrack, Operation op) {
		Policy.CacheEntry<String, LimiterState> entry = table.policy.getEntryIfPresentQuietly(key);
		if (entry != null) {
			LimiterState held = entry.getValue();
			long now = entry.snapshotAt();
			if (entry.expiresAt() - now < neededNanos(limit, maxWaitNanos) && !table.keep(key, limit, maxWaitNanos)) {
				return null;
			}
			LimiterState state = table.current(key, held, limit, this.clock);
			return op.apply(state, (state != held) ? this.clock.nanos() : now, cost, maxWaitNanos);
		}
		if (table.isFull()) {
			table.expireStates(this.clock.nanos());
		}
		LimiterState state;
		Decision[] byOverflow = new Decision[1];
		state = table.states.get(key, (k) -> {
			LimiterState removed = table.removedButReachable.asMap().remove(k);
			if (removed != null) {
				table.tracked.incrementAndGet();
				return removed;
			}
			LimiterState overflow = table.overflow(k, limit);
			long now = this.clock.nanos();
			if (mayTrack && isFresh(overflow, now) && table.makeRoom()) {
				return limit.newState();
			}
			// Decided here, atomically with the choice, so that no other thread of this key can find the
			// overflow budget fresh in between and start a tracked state beside it.
			if (mayTrack) {
				table.overflowDecisions.increment();
			}
			byOverflow[0] = op.apply(overflow, now, cost, maxWaitNanos);
			return null;
		});
		if (state == null) {
			return byOverflow[0];
		}
		if (maxWaitNanos > 0 && !table.keep(key, limit, maxWaitNanos)) {
			// Created (or found) with the idle time of its limit: a reservation ahead needs longer.
			return null;
		}
		return op.apply(table.current(key, state, limit, this.clock), this.clock.nanos(), cost, maxWaitNanos);
	}

	/**
	 * The time an entry must still have before it may expire, when an operation of this limit and wait
	 * starts: whatever the operation does, the state is fresh again within the limit's idle time plus
	 * the wait it may reserve; half the slack is kept on top.
	 */
	private static long neededNanos(Limit limit, long maxWaitNanos) {
		return untilFresh(limit, maxWaitNanos) + SLACK_NANOS / 2;
	}

	/**
	 * What an entry is given when it is kept longer: what it needs, the whole slack, and a sixteenth of
	 * the idle time, so that a busy key is kept longer at most once per half second (or per sixteenth of
	 * its idle time, when that is longer) instead of on every read.
	 */
	private static long keptNanos(Limit limit, long maxWaitNanos) {
		return untilFresh(limit, maxWaitNanos) + SLACK_NANOS + Math.min(limit.idleNanosUntilFresh(), HORIZON_NANOS) / 16;
	}

	/** The idle time plus the wait, at most {@link #HORIZON_NANOS} (so both sums stay within Caffeine's range). */
	private static long untilFresh(Limit limit, long maxWaitNanos) {
		long idle = limit.idleNanosUntilFresh();
		return (idle >= HORIZON_NANOS || maxWaitNanos >= HORIZON_NANOS - idle) ? HORIZON_NANOS : idle + maxWaitNanos;
	}

	@FunctionalInterface
	private interface Operation {

		@Nullable Decision apply(LimiterState state, long nowNanos, long cost, long maxWaitNanos);

	}

	private static boolean isFresh(LimiterState state, long now) {
		// Every algorithm reports a reset of zero exactly when nothing of its budget is spent; a retired
		// overflow budget is about to be replaced and counts as spent.
		Decision peek = state.peek(now);
		return peek != null && peek.resetNanos() == 0;
	}

	/** The states of one limit. */
	private final class Table {

		private final String limitId;

		private final Cache<String, LimiterState> states;

		private final Cache<String, LimiterState> removedButReachable;

		private final Policy<String, LimiterState> policy;

		private final Policy.VarExpiration<String, LimiterState> expiration;

		private final AtomicLong tracked = new AtomicLong();

		private final AtomicReferenceArray<LimiterState> overflow = new AtomicReferenceArray<>(OVERFLOW_BUDGETS);

		private final LongAdder overflowDecisions = new LongAdder();

		/** When {@link #expireStates} last let Caffeine remove fresh states (a time of the store's clock). */
		private final AtomicLong lastCleanUp;

		private final AtomicBoolean full = new AtomicBoolean();

		Table(String limitId) {
			this.limitId = limitId;
			Executor executor = CaffeineRateLimitStore.this.executor;
			RateLimitClock clock = CaffeineRateLimitStore.this.clock;
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
		 * Keeps a key's entry for what an operation of this acquisition may need and more, from now
		 * (Caffeine's clock, read under the entry's lock): reads are quiet, so this is what keeps a busy key.
		 * @return whether the entry now has what the operation needs; {@code false} when it expired first
		 * (then nothing may be decided on the state it held: ask again)
		 */
		boolean keep(String key, Limit limit, long maxWaitNanos) {
			this.expiration.setExpiresAfter(key, keptNanos(limit, maxWaitNanos), TimeUnit.NANOSECONDS);
			Policy.CacheEntry<String, LimiterState> entry = this.policy.getEntryIfPresentQuietly(key);
			return entry != null && entry.expiresAt() - entry.snapshotAt() >= neededNanos(limit, maxWaitNanos);
		}

		boolean isFull() {
			return this.tracked.get() >= CaffeineRateLimitStore.this.maximumSize;
		}

		/** Takes a place for a new state, unless the table is full. */
		boolean makeRoom() {
			long max = CaffeineRateLimitStore.this.maximumSize;
			while (true) {
				long current = this.tracked.get();
				if (current >= max) {
					if (this.full.compareAndSet(false, true)) {
						logger.log(System.Logger.Level.WARNING, "The rate limit table of '" + this.limitId
								+ "' is full (" + max + " keys, the store's maximum size per limit): keys it does "
								+ "not track are judged by " + OVERFLOW_BUDGETS + " shared overflow budgets until "
								+ "tracked states expire");
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
		void expireStates(long now) {
			long last = this.lastCleanUp.get();
			if (now - last >= CLEAN_UP_INTERVAL_NANOS && this.lastCleanUp.compareAndSet(last, now)) {
				this.states.cleanUp();
			}
		}

		LimiterState overflow(String key, Limit limit) {
			int index = index(key);
			while (true) {
				LimiterState budget = this.overflow.get(index);
				if (budget == null) {
					this.overflow.compareAndSet(index, null, limit.newState());
					continue;
				}
				if (budget.limit().equals(limit)) {
					return budget;
				}
				// Only the thread that retires a budget gets its successor; the others meet the retired
				// budget (whose operations answer null) or the successor.
				LimiterState next = budget.moveTo(limit, CaffeineRateLimitStore.this.clock.nanos());
				if (next == null) {
					return budget;
				}
				if (this.overflow.compareAndSet(index, budget, next)) {
					return next;
				}
				// A reset made the slot whole meanwhile: that budget is the one to move.
			}
		}

		/** Makes the overflow budget that judges an untracked key whole. */
		void resetOverflow(String key) {
			int index = index(key);
			while (true) {
				LimiterState budget = this.overflow.get(index);
				if (budget == null || this.overflow.compareAndSet(index, budget, budget.limit().newState())) {
					return;
				}
			}
		}

		/**
		 * Returns the key's state under the limit asked for: the tracked state itself when its limit is
		 * that one, else its successor (what was spent carried over), swapped in atomically for the key.
		 * An update, not a new entry, so the key never expires sooner than its old state would have.
		 */
		LimiterState current(String key, LimiterState state, Limit limit, RateLimitClock clock) {
			if (state.limit().equals(limit)) {
				return state;
			}
			LimiterState[] now = new LimiterState[] { state };
			this.states.asMap().computeIfPresent(key, (k, held) -> {
				if (held.limit().equals(limit)) {
					now[0] = held;
					return held;
				}
				LimiterState next = held.moveTo(limit, clock.nanos());
				now[0] = (next != null) ? next : held;
				return now[0];
			});
			return now[0];
		}

		/** A hash seeded per store, so that clients cannot choose which keys share a budget. */
		private int index(String key) {
			long h = CaffeineRateLimitStore.this.seed;
			for (int i = 0; i < key.length(); i++) {
				h = (h ^ key.charAt(i)) * 0x9E3779B97F4A7C15L;
				h ^= (h >>> 29);
			}
			h ^= (h >>> 32);
			return (int) (h & (OVERFLOW_BUDGETS - 1));
		}

	}

	static final class IdleUntilFresh implements Expiry<String, LimiterState> {

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

	}
}
