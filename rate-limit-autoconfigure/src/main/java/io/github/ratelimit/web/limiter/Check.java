package io.github.ratelimit.web.limiter;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.Decision;
import io.github.ratelimit.core.Receipt;
import io.github.ratelimit.web.CountMode;
import io.github.ratelimit.web.DecisionOutcome;
import io.github.ratelimit.web.policy.RateLimitPolicy;

/**
 * One policy's part of one request: the policy as it judged the request (plan applied), the budget and
 * cost it asked for, what the store took ({@code receipt}) and what it decided. Immutable.
 * @param policy the policy in force
 * @param acquisition its key, limit and cost
 * @param receipt what the store's admission took, and where
 * @param decision what the request is told (the receipt's, or what a give-back or a refused wait left)
 * @param kept whether the request keeps what was taken: its policies (enforced, or shadow) all allowed it
 */
public record Check(RateLimitPolicy policy, Acquisition acquisition, Receipt receipt, Decision decision, boolean kept) {

	/** Whether this check is settled once the response is known: it counts only some responses and holds a cost. */
	boolean countsLater() {
		return this.kept && this.policy.count() != CountMode.ALL && this.receipt.holdsCost();
	}

	/** Whether it holds a slot of a concurrency limit until the request ends. */
	boolean holdsSlot() {
		return this.kept && this.policy.isConcurrency();
	}

	boolean enforced() {
		return !this.policy.shadow();
	}

	/**
	 * What the policy did to the request, as metrics count it: decided by the store, by its local fallback,
	 * or by {@code on-failure} without a store (a receipt of an allowed decision that holds nothing, in a
	 * request another policy rejected, was merely given back). A wait of a policy that slows down is
	 * {@code slowed}, any other {@code delayed}.
	 * @return the outcome
	 */
	public DecisionOutcome outcome() {
		Receipt.Place place = this.receipt.place();
		if (place == Receipt.Place.BANNED) {
			return DecisionOutcome.BANNED;
		}
		if (place == Receipt.Place.LOCAL) {
			return this.decision.isAllowed() ? DecisionOutcome.LOCAL_ALLOWED : DecisionOutcome.LOCAL_REJECTED;
		}
		if (place == Receipt.Place.NOWHERE && (this.kept || !this.decision.isAllowed())) {
			return this.decision.isAllowed() ? DecisionOutcome.FAILED_OPEN : DecisionOutcome.FAILED_CLOSED;
		}
		if (!this.decision.isAllowed()) {
			return DecisionOutcome.REJECTED;
		}
		if (this.decision.waitNanos() > 0) {
			return this.policy.slowsDown() ? DecisionOutcome.SLOWED : DecisionOutcome.DELAYED;
		}
		return DecisionOutcome.ALLOWED;
	}

	/** This check once its slot of a concurrency limit was given back: it holds none. */
	Check withoutSlot() {
		return new Check(this.policy, this.acquisition, this.receipt, this.decision, false);
	}

	Check with(Decision decision) {
		return new Check(this.policy, this.acquisition, this.receipt, decision, this.kept);
	}
}
