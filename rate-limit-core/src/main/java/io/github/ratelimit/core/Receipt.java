package io.github.ratelimit.core;

import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * What {@link RateLimitStore#admitAll(java.util.List)} took for one acquisition, and where: handed to
 * {@link RateLimitStore#giveBack(Receipt)} when the response shows that the request does not count
 * (a success under {@code count: failures}). Immutable.
 * <p>
 * A give-back removes only what the attempt still holds, under the limit now in force: nothing of a
 * window that has ended or of a log entry that has aged out, only the part of a bucket's step that
 * refill has not restored yet. It never leaves the budget more generous than if the attempt had never
 * been admitted.
 *
 * @param acquisition the acquisition admitted
 * @param decision the store's decision on it; a rejected one took nothing
 * @param mark where in the key's state the cost was taken, in the store's own terms (for the buckets the
 * moment the step taken is refilled, for a window its end, for a log its entry); {@link #NO_MARK}
 * when the store keeps none
 * @param place where the cost was taken
 * @param mirror the same cost taken in a second store too, or {@code null}: the Redis store takes the
 * cost of a policy with {@code on-failure: local} in its local store as well, so that the local budget
 * already holds what this instance admitted when Redis goes away
 */
public record Receipt(Acquisition acquisition, Decision decision, long mark, Place place, @Nullable Receipt mirror) {

	/** The mark of a store that keeps none: its give-back is its {@link RateLimitStore#release}. */
	public static final long NO_MARK = Long.MIN_VALUE;

	/** The mark of the {@link Place#BANNED} receipt whose rejection started the ban. */
	public static final long BAN_STARTED = 1;

	public Receipt {
		Objects.requireNonNull(acquisition, "acquisition");
		Objects.requireNonNull(decision, "decision");
		Objects.requireNonNull(place, "place");
	}

	/**
	 * Creates a receipt of a cost taken in one place.
	 * @param acquisition the acquisition admitted
	 * @param decision the store's decision on it
	 * @param mark where in the key's state the cost was taken, or {@link #NO_MARK}
	 * @param place where the cost was taken
	 */
	public Receipt(Acquisition acquisition, Decision decision, long mark, Place place) {
		this(acquisition, decision, mark, place, null);
	}

	/**
	 * Returns whether the acquisition holds a cost that a give-back can return.
	 * @return {@code true} when it was allowed and its cost was taken somewhere
	 */
	public boolean holdsCost() {
		return this.decision.isAllowed() && this.place != Place.NOWHERE;
	}

	/**
	 * Where an acquisition was decided, and so where the cost it holds was taken.
	 */
	public enum Place {

		/** In the store asked (Redis, or the in-process store): allowed, it holds its cost there. */
		STORE,

		/**
		 * In the in-process store a shared store fell back to ({@code on-failure: local}): allowed, it holds
		 * its cost there.
		 */
		LOCAL,

		/**
		 * Nowhere: it holds nothing. The store could not decide and {@code on-failure} let the request
		 * through ({@code allow}) or refused it ({@code deny}); or another budget of the same request
		 * rejected it and what it took was given back at once.
		 */
		NOWHERE,

		/**
		 * Nowhere, because the key is banned ({@link Ban}): its budget was not asked, and the decision's
		 * retry-after is the rest of the ban. The receipt of the rejection that started the ban has the
		 * mark {@link #BAN_STARTED}; the others have {@link #NO_MARK}.
		 */
		BANNED

	}
}
