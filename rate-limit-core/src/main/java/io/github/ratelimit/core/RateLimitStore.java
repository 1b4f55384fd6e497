package io.github.ratelimit.core;

import java.util.ArrayList;
import java.util.List;

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
