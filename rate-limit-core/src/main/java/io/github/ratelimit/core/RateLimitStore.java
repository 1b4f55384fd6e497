package io.github.ratelimit.core;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import org.jspecify.annotations.Nullable;

/**
 * Where limiter states live: in process ({@code CaffeineRateLimitStore}) or shared between instances
 * (the Redis store). A store knows nothing of HTTP. Implementations are thread-safe, and exact: a
 * budget is never over-spent however many threads (or instances) call at once.
 */
public interface RateLimitStore {

	/**
	 * Takes tokens from one budget when they are available.
	 * @param acquisition which budget, how much
	 * @return the decision; when rejected, nothing was taken
	 */
	Decision tryAcquire(Acquisition acquisition);

	/**
	 * Gives back tokens taken by {@link #tryAcquire(Acquisition)}.
	 * @param acquisition the acquisition that took them
	 * @return how the budget reads afterwards
	 */
	Decision release(Acquisition acquisition);

	/**
	 * Takes tokens from several budgets, all or nothing, as {@link #tryAcquireAll(List)} does, for
	 * budgets that may give them back once the response is known: each acquisition comes back with a
	 * receipt for {@link #giveBack(Receipt)}. Taking up front is what keeps attempts in flight from all
	 * seeing the same budget: however many arrive at once, at most the budget's remaining tokens are
	 * admitted.
	 * <p>
	 * A store that {@linkplain #bans() bans} refuses an acquisition of a banned key at once, without asking
	 * its budget ({@link Receipt.Place#BANNED}), and counts the first rejection of a request by a budget
	 * towards its key's {@link Ban}, in the same step.
	 * <p>
	 * This default keeps no mark: its receipts give back through {@link #release(Acquisition)}, which
	 * subtracts from the state as it is then (a store of this project gives back exactly); it bans nobody.
	 * @param acquisitions the budgets, in the order they are asked
	 * @return one receipt per acquisition, in the same order; the request is allowed only when all are
	 */
	default List<Receipt> admitAll(List<Acquisition> acquisitions) {
		List<Decision> decisions = tryAcquireAll(acquisitions);
		boolean allowed = decisions.stream().allMatch(Decision::isAllowed);
		List<Receipt> receipts = new ArrayList<>(decisions.size());
		for (int i = 0; i < decisions.size(); i++) {
			Decision decision = decisions.get(i);
			// A request rejected by one budget holds nothing in the others: tryAcquireAll gave them back.
			receipts.add(new Receipt(acquisitions.get(i), decision, Receipt.NO_MARK,
					(allowed || !decision.isAllowed()) ? Receipt.Place.STORE : Receipt.Place.NOWHERE));
		}
		return receipts;
	}

	/**
	 * {@link #admitAll(List)} without blocking the caller: a caller that must not block (a reactive web
	 * application's event loop) goes on when the stage completes. The stage completes with the receipts, or
	 * exceptionally with what {@code admitAll} would have thrown.
	 * <p>
	 * This default calls {@code admitAll} on the calling thread, so it blocks when that does: the reactive
	 * side calls it on Reactor's bounded elastic scheduler, except for {@link CaffeineRateLimitStore}, whose
	 * calls are CPU only. A store that overrides this method promises not to block in it (a network client's
	 * call that completes the stage when the reply arrives, as the Redis store's on Lettuce): the reactive side
	 * then calls it on the event loop.
	 * @param acquisitions the budgets, in the order they are asked
	 * @return the receipts, as {@link #admitAll(List)} returns them
	 */
	default CompletionStage<List<Receipt>> admitAllAsync(List<Acquisition> acquisitions) {
		try {
			return CompletableFuture.completedFuture(admitAll(acquisitions));
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	/**
	 * Gives back what an admitted acquisition still holds, once its response shows that it does not
	 * count: only that, under the limit in force now, never more than if it had never been admitted (see
	 * {@link Receipt}). Never blocks for long: a shared store may give back asynchronously.
	 * @param receipt the receipt {@link #admitAll(List)} returned
	 * @return how the budget reads afterwards; {@code null} when it is not known (nothing was held, or
	 * the give-back is still under way)
	 */
	default @Nullable Decision giveBack(Receipt receipt) {
		if (!receipt.holdsCost()) {
			return null;
		}
		return release(receipt.acquisition());
	}

	/**
	 * Tells whether tokens are available without taking them, for budgets that count a request only
	 * once its response is known. The stores of this project read without writing (one call); this
	 * default, for other stores, takes and gives back, so a concurrent request may briefly see the
	 * tokens as taken (it can be rejected, never wrongly allowed).
	 * @param acquisition which budget, how much
	 * @return when the tokens are available, the budget as it reads now (nothing taken); otherwise the
	 * rejection {@link #tryAcquire(Acquisition)} would give
	 */
	default Decision check(Acquisition acquisition) {
		Decision decision = tryAcquire(new Acquisition(acquisition.limitId(), acquisition.limit(), acquisition.key(),
				acquisition.cost()));
		return decision.isAllowed() ? release(acquisition) : decision;
	}

	/**
	 * Checks several budgets without taking anything, as {@link #check(Acquisition)} does for one; a
	 * store may answer them all in one call.
	 * @param acquisitions the budgets
	 * @return one decision per acquisition, in the same order
	 */
	default List<Decision> checkAll(List<Acquisition> acquisitions) {
		List<Decision> decisions = new ArrayList<>(acquisitions.size());
		for (Acquisition acquisition : acquisitions) {
			decisions.add(check(acquisition));
		}
		return decisions;
	}

	/**
	 * Reads a budget without changing it: what an operator reads (the actuator endpoint).
	 * @param acquisition which budget (its cost is ignored)
	 * @return the state as a request of cost 0 would see it
	 * @throws IllegalStateException when a shared store cannot read it now (the endpoint answers 503); a
	 * budget is never made up
	 */
	Decision peek(Acquisition acquisition);

	/**
	 * Forgets a budget's state, so it is whole again (e.g. to unlock a user).
	 * @param limitId the limit
	 * @param key the key
	 * @throws IllegalStateException when a shared store cannot reset it now (the endpoint answers 503)
	 */
	void reset(String limitId, String key);

	/**
	 * Returns how long a key stays banned ({@link Ban}); {@link #reset} lifts a ban.
	 * @param acquisition the key, its limit and its ban
	 * @return nanoseconds; 0 when it is not banned (the default: a store that bans nobody)
	 * @throws IllegalStateException when a shared store cannot read it now
	 */
	default long bannedNanos(Acquisition acquisition) {
		return 0;
	}

	/**
	 * Returns whether {@link #admitAll} bans keys whose acquisitions carry a {@link Ban}: the starter refuses
	 * to start with a policy that bans on a store that does not.
	 * @return {@code false} by default: this interface's {@code admitAll} ignores bans
	 */
	default boolean bans() {
		return false;
	}

	/**
	 * Forgets every budget of this store, so that all are whole again: for tests, which want each test
	 * to start with full budgets (the rate-limit-test artifact calls it after each test). Not meant for
	 * production: on a shared store it resets every instance's budgets at once.
	 * @throws UnsupportedOperationException when the store cannot (this default)
	 */
	default void resetAll() {
		throw new UnsupportedOperationException(getClass().getName() + " cannot reset all its budgets: implement "
				+ "RateLimitStore.resetAll()");
	}

	/**
	 * Takes tokens from several budgets, all or nothing: when one rejects, those already taken from
	 * the others are given back, so a rejected request consumes nothing. While the request is being
	 * decided, a concurrent request may briefly see the tokens as taken (it can be rejected, never
	 * wrongly allowed).
	 * @param acquisitions the budgets, in the order they are asked
	 * @return one decision per acquisition, in the same order; the request is allowed only when all are
	 */
	default List<Decision> tryAcquireAll(List<Acquisition> acquisitions) {
		if (acquisitions.size() == 1) {
			// One budget (the common request): nothing to give back, no list to grow.
			return List.of(tryAcquire(acquisitions.get(0)));
		}
		List<Decision> decisions = new ArrayList<>(acquisitions.size());
		boolean rejected = false;
		for (Acquisition acquisition : acquisitions) {
			Decision decision = tryAcquire(acquisition);
			decisions.add(decision);
			rejected |= !decision.isAllowed();
		}
		if (rejected) {
			for (int i = 0; i < decisions.size(); i++) {
				if (decisions.get(i).isAllowed()) {
					decisions.set(i, release(acquisitions.get(i)));
				}
			}
		}
		return decisions;
	}
}
