package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import org.jspecify.annotations.Nullable;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.CaffeineRateLimitStore;
import io.github.ratelimit.core.Decision;
import io.github.ratelimit.core.Limit;
import io.github.ratelimit.core.OnFailure;
import io.github.ratelimit.core.RateLimitClock;
import io.github.ratelimit.core.RateLimitStore;
import io.github.ratelimit.core.Receipt;

/**
 * What decides when Redis cannot: each acquisition's {@link OnFailure} (its limit's own, else the store's),
 * and the local store of {@code on-failure: local}, which mirrors what Redis admits for such limits (see
 * {@link #mirrored}). Thread-safe.
 */
final class Fallback {

	private static final long DENY_RETRY_AFTER_NANOS = Duration.ofSeconds(1).toNanos();

	private final OnFailure onFailure;

	/** The limits that fail their own way ({@code rate-limit.policies.<name>.on-failure}), by limit id. */
	private final Map<String, OnFailure> onFailureByLimit;

	/** Whether the store or any limit falls back to the local store: then it is reset with the keys. */
	private final boolean usesLocal;

	/** The store of {@code on-failure: local}. */
	final RateLimitStore localStore;

	/**
	 * The keys decided by the local store while Redis could not answer, each until its budget there would
	 * be whole again (by its limit's idle time): Redis never saw what they spent (see {@link #mirrored}).
	 * Bounded like the local store's tables.
	 */
	private final Cache<String, Limit> decidedLocally = Caffeine.newBuilder()
		.maximumSize(CaffeineRateLimitStore.DEFAULT_MAXIMUM_SIZE)
		.expireAfter(Expiry.<String, Limit>creating((key, limit) -> Duration.ofNanos(
				Math.min(limit.idleNanosUntilFresh(), Long.MAX_VALUE / 4))))
		.build();

	/** Decisions made by on-failure instead of Redis. */
	final LongAdder fallbacks = new LongAdder();

	Fallback(RedisSettings settings) {
		this.onFailure = settings.onFailure;
		this.onFailureByLimit = Map.copyOf(settings.onFailureByLimit);
		this.usesLocal = this.onFailure == OnFailure.LOCAL || this.onFailureByLimit.containsValue(OnFailure.LOCAL);
		this.localStore = (settings.localStore != null) ? settings.localStore
				: new CaffeineRateLimitStore(CaffeineRateLimitStore.DEFAULT_MAXIMUM_SIZE, RateLimitClock.SYSTEM);
	}

	/** How on-failure decides, for log lines. */
	String describe() {
		String name = this.onFailure.name().toLowerCase(Locale.ROOT);
		return this.onFailureByLimit.isEmpty() ? name : name + " (or a policy's own)";
	}

	/** What decides an acquisition when Redis cannot: its limit's own choice, else the store's. */
	private OnFailure onFailure(Acquisition acquisition) {
		return this.onFailureByLimit.isEmpty() ? this.onFailure
				: this.onFailureByLimit.getOrDefault(acquisition.limitId(), this.onFailure);
	}

	/** Forgets a key (all keys, for {@code null}) in the local store, when any limit uses it. */
	void reset(@Nullable String limitId, @Nullable String key) {
		if (!this.usesLocal) {
			return;
		}
		if (limitId == null || key == null) {
			this.localStore.resetAll();
			this.decidedLocally.invalidateAll();
			return;
		}
		this.localStore.reset(limitId, key);
		this.decidedLocally.invalidate(limitId + '\n' + key);
	}

	/**
	 * Decides without Redis, each acquisition by its limit's {@code on-failure}: {@code allow} lets it
	 * through, {@code deny} refuses it, {@code local} asks the local store. All or nothing as ever: a
	 * request one of whose limits refuses takes nothing locally. An admission's receipts are {@code LOCAL}
	 * with the local store's mark, else {@code NOWHERE}; a check or a release answers the local store's
	 * budget, or the whole one.
	 * @param leases per acquisition, the lease of a concurrency limit, told where its slot was taken
	 */
	Outcome decide(List<Acquisition> acquisitions, ScriptOp op, Leases.Lease @Nullable [] leases) {
		this.fallbacks.increment();
		int n = acquisitions.size();
		OnFailure[] modes = new OnFailure[n];
		boolean denied = false;
		List<Acquisition> local = new ArrayList<>(0);
		for (int i = 0; i < n; i++) {
			modes[i] = onFailure(acquisitions.get(i));
			denied |= modes[i] == OnFailure.DENY;
			if (modes[i] == OnFailure.LOCAL) {
				local.add(acquisitions.get(i));
			}
		}
		for (int i = 0; leases != null && i < n; i++) {
			if (leases[i] != null) {
				// A slot on-failure grants is not in Redis: given back to the local store, or nowhere.
				leases[i].where = (modes[i] == OnFailure.LOCAL && op == ScriptOp.ACQUIRE && !denied) ? Receipt.Place.LOCAL
						: Receipt.Place.NOWHERE;
			}
		}
		if (op != ScriptOp.ACQUIRE) {
			List<Decision> decisions = new ArrayList<>(n);
			// A check or a release: the local store's budget, or the whole one (nothing was taken in Redis' stead).
			for (int i = 0; i < n; i++) {
				Acquisition acquisition = acquisitions.get(i);
				decisions.add((modes[i] != OnFailure.LOCAL) ? whole(acquisition)
						: (op == ScriptOp.CHECK) ? this.localStore.check(acquisition) : this.localStore.release(acquisition));
			}
			return new Outcome(decisions, 0, null, null);
		}
		// The local store's receipts, with its own marks: a give-back goes there.
		List<Receipt> localReceipts = (!denied && !local.isEmpty()) ? this.localStore.admitAll(withoutBans(local)) : List.of();
		List<Receipt> receipts = new ArrayList<>(n);
		for (int i = 0, nextLocal = 0; i < n; i++) {
			Acquisition acquisition = acquisitions.get(i);
			Limit limit = acquisition.limit();
			Receipt theirs = (modes[i] == OnFailure.LOCAL && !denied) ? localReceipts.get(nextLocal++) : null;
			Receipt.Place place = (theirs != null && theirs.place() == Receipt.Place.STORE) ? Receipt.Place.LOCAL
					: Receipt.Place.NOWHERE;
			// Refused; the local store's; allowed without a store; or, in a request another limit refuses, left as it was.
			Decision decision = (modes[i] == OnFailure.DENY)
					? Decision.rejected(limit.limit(), 0, DENY_RETRY_AFTER_NANOS, DENY_RETRY_AFTER_NANOS)
					: (theirs != null) ? theirs.decision()
							: denied ? whole(acquisition) : Decision.allowed(limit.limit(), limit.burst() - acquisition.cost(), 0);
			receipts.add(new Receipt(acquisition, decision, (theirs != null) ? theirs.mark() : Receipt.NO_MARK, place));
			if (place == Receipt.Place.LOCAL) {
				// Redis never sees what it spent (see mirrored).
				this.decidedLocally.put(localKey(acquisition), limit);
			}
		}
		return new Outcome(receipts.stream().map(Receipt::decision).toList(), 0, receipts, null);
	}

	/**
	 * Takes what Redis admitted for a limit with {@code on-failure: local} in the local store as well, so
	 * that when Redis goes away the local budget already holds what this instance admitted. And for a
	 * key this instance decided locally while Redis could not answer (within the time its budget needs to
	 * be whole again), Redis' admission stands only when the local store allows it too: what the local
	 * store admitted meanwhile, which Redis never saw, is not handed out again. An instance flapping
	 * between Redis and its local store so never hands out the limit in both. For any other key the local
	 * store only records: with Redis answering, its table, full of a flood's keys, refuses nobody.
	 * @param giveBack gives back what a receipt holds, where it was taken
	 */
	List<Receipt> mirrored(List<Receipt> receipts, Consumer<Receipt> giveBack) {
		if (!this.usesLocal) {
			return receipts;
		}
		List<Receipt> mirrored = null;
		boolean refused = false;
		for (int i = 0; i < receipts.size(); i++) {
			Receipt receipt = receipts.get(i);
			Acquisition acquisition = receipt.acquisition();
			if (receipt.place() != Receipt.Place.STORE || !receipt.holdsCost() || Leases.isConcurrency(acquisition)
					|| onFailure(acquisition) != OnFailure.LOCAL) {
				continue;
			}
			if (mirrored == null) {
				mirrored = new ArrayList<>(receipts);
			}
			Receipt mirror = this.localStore.admitAll(withoutBans(List.of(acquisition))).get(0);
			if (mirror.holdsCost()) {
				mirrored.set(i, new Receipt(acquisition, receipt.decision(), receipt.mark(), receipt.place(), mirror));
			}
			else if (this.decidedLocally.getIfPresent(localKey(acquisition)) != null) {
				refused = true;
				mirrored.set(i, new Receipt(acquisition, mirror.decision(), Receipt.NO_MARK, Receipt.Place.LOCAL));
			}
		}
		if (mirrored == null || !refused) {
			return (mirrored != null) ? mirrored : receipts;
		}
		// All or nothing: what the others took, in Redis and locally, is given back.
		for (int i = 0; i < mirrored.size(); i++) {
			Receipt receipt = mirrored.get(i);
			if (receipt.holdsCost()) {
				giveBack.accept(receipt);
				mirrored.set(i, new Receipt(receipt.acquisition(), receipt.decision(), Receipt.NO_MARK, Receipt.Place.NOWHERE));
			}
			else if (receipt.place() == Receipt.Place.LOCAL) {
				// The refusing one: Redis took its cost, which goes back.
				giveBack.accept(receipts.get(i));
			}
		}
		return mirrored;
	}

	/**
	 * The acquisitions as the local store takes them: without their bans, which live in Redis only, so that
	 * one instance's outage never leaves a ban that Redis, the other instances and an operator's reset do
	 * not know (while Redis cannot answer, a banned key is judged by its local budget).
	 */
	private static List<Acquisition> withoutBans(List<Acquisition> acquisitions) {
		return ScriptCodec.bans(acquisitions) ? acquisitions.stream().map(Fallback::withoutBan).toList() : acquisitions;
	}

	/** The acquisition without its ban: itself when it has none. */
	static Acquisition withoutBan(Acquisition a) {
		return (a.ban() == null) ? a : new Acquisition(a.limitId(), a.limit(), a.key(), a.cost(), a.maxWaitNanos());
	}

	private static String localKey(Acquisition acquisition) {
		return acquisition.limitId() + '\n' + acquisition.key();
	}

	/** A budget as on-failure shows it without a store: whole. */
	static Decision whole(Acquisition acquisition) {
		return Decision.allowed(acquisition.limit().limit(), acquisition.limit().burst(), 0);
	}
}
