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
	 * Takes tokens from several budgets, all or nothing: when one rejects, those already taken from
	 * the others are given back, so a rejected request consumes nothing. While the request is being
	 * decided, a concurrent request may briefly see the tokens as taken (it can be rejected, never
	 * wrongly allowed).
	 * @param acquisitions the budgets, in the order they are asked
	 * @return one decision per acquisition, in the same order; the request is allowed only when all are
	 */
	default List<Decision> tryAcquireAll(List<Acquisition> acquisitions) {
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
