package io.github.ratelimit.core;

/**
 * The answer of one limit to one request: allowed or not, and what response headers need to say.
 * Immutable and thread-safe.
 */
public final class Decision {

	private final boolean allowed;

	private final long limit;

	private final long remaining;

	private final long resetNanos;

	private final long nextNanos;

	/**
	 * The retry-after of a rejection, the wait of an allowed request: never both, so one field (a
	 * decision is allocated per request; this keeps it at 56 bytes instead of 64).
	 */
	private final long afterNanos;

	private Decision(boolean allowed, long limit, long remaining, long resetNanos, long nextNanos,
			long retryAfterNanos, long waitNanos) {
		this.allowed = allowed;
		this.limit = limit;
		this.remaining = remaining;
		this.resetNanos = resetNanos;
		this.nextNanos = Math.max(0, nextNanos);
		this.afterNanos = allowed ? waitNanos : retryAfterNanos;
	}

	/**
	 * Creates an allowing decision.
	 * @param limit the quota per period
	 * @param remaining the tokens left after this request
	 * @param resetNanos the time until the quota is whole again
	 * @param nextNanos the time until additional quota is made available (see {@link #nextNanos()})
	 * @return the decision
	 */
	public static Decision allowed(long limit, long remaining, long resetNanos, long nextNanos) {
		return new Decision(true, limit, remaining, resetNanos, nextNanos, 0, 0);
	}

	/**
	 * Creates an allowing decision for a store that cannot tell when additional quota comes: it says
	 * the reset, the latest that can be.
	 * @param limit the quota per period
	 * @param remaining the tokens left after this request
	 * @param resetNanos the time until the quota is whole again
	 * @return the decision
	 */
	public static Decision allowed(long limit, long remaining, long resetNanos) {
		return allowed(limit, remaining, resetNanos, resetNanos);
	}

	/**
	 * Creates a decision that allows the request once it has waited for its turn (delay mode); the
	 * tokens are already taken.
	 * @param limit the quota per period
	 * @param remaining the tokens left after this request
	 * @param resetNanos the time until the quota is whole again
	 * @param nextNanos the time until additional quota is made available
	 * @param waitNanos how long the request must wait before it proceeds
	 * @return the decision
	 */
	public static Decision delayed(long limit, long remaining, long resetNanos, long nextNanos, long waitNanos) {
		return new Decision(true, limit, remaining, resetNanos, nextNanos, 0, Math.max(0, waitNanos));
	}

	/**
	 * Creates a decision that allows the request once it has waited for its turn, for a store that
	 * cannot tell when additional quota comes (it says the reset).
	 * @param limit the quota per period
	 * @param remaining the tokens left after this request
	 * @param resetNanos the time until the quota is whole again
	 * @param waitNanos how long the request must wait before it proceeds
	 * @return the decision
	 */
	public static Decision delayed(long limit, long remaining, long resetNanos, long waitNanos) {
		return delayed(limit, remaining, resetNanos, resetNanos, waitNanos);
	}

	/**
	 * Creates a rejecting decision.
	 * @param limit the quota per period
	 * @param remaining the tokens left (fewer than the request needed)
	 * @param resetNanos the time until the quota is whole again
	 * @param nextNanos the time until additional quota is made available; at most the retry-after
	 * @param retryAfterNanos the time until the same request would be allowed; positive
	 * @return the decision
	 */
	public static Decision rejected(long limit, long remaining, long resetNanos, long nextNanos,
			long retryAfterNanos) {
		long retryAfter = Math.max(1, retryAfterNanos);
		return new Decision(false, limit, remaining, resetNanos, Math.min(nextNanos, retryAfter), retryAfter, 0);
	}

	/**
	 * Creates a rejecting decision for a store that cannot tell when additional quota comes sooner than
	 * the retry: it says the retry-after.
	 * @param limit the quota per period
	 * @param remaining the tokens left (fewer than the request needed)
	 * @param resetNanos the time until the quota is whole again
	 * @param retryAfterNanos the time until the same request would be allowed; positive
	 * @return the decision
	 */
	public static Decision rejected(long limit, long remaining, long resetNanos, long retryAfterNanos) {
		return rejected(limit, remaining, resetNanos, retryAfterNanos, retryAfterNanos);
	}

	/**
	 * Returns whether the request may proceed.
	 * @return {@code true} when allowed
	 */
	public boolean isAllowed() {
		return this.allowed;
	}

	/**
	 * Returns the quota per period of the limit that decided.
	 * @return the quota
	 */
	public long limit() {
		return this.limit;
	}

	/**
	 * Returns how many tokens are left now (after this request when it was allowed).
	 * @return zero or more
	 */
	public long remaining() {
		return this.remaining;
	}

	/**
	 * Returns the time until the quota is whole again.
	 * @return nanoseconds, zero or more
	 */
	public long resetNanos() {
		return this.resetNanos;
	}

	/**
	 * Returns the time until additional quota is made available, the {@code t} of the IETF
	 * {@code RateLimit} field (draft-ietf-httpapi-ratelimit-headers 10 and 11): a token bucket's next
	 * token, a leaky bucket's next drain, a fixed window's end, the moment the oldest entry of a
	 * sliding window log ages out, the moment a sliding window counter's estimate has dropped enough to
	 * admit one more request of the cost asked (of cost 1 for a peek). Zero when nothing is spent; never
	 * after the retry-after of a rejection.
	 * @return nanoseconds, zero or more
	 */
	public long nextNanos() {
		return this.nextNanos;
	}

	/**
	 * Returns the time until the same request would be allowed; zero when it was allowed.
	 * @return nanoseconds
	 */
	public long retryAfterNanos() {
		return this.allowed ? 0 : this.afterNanos;
	}

	/**
	 * Returns how long an allowed request must wait before it proceeds (delay mode); zero otherwise.
	 * @return nanoseconds
	 */
	public long waitNanos() {
		return this.allowed ? this.afterNanos : 0;
	}

	@Override
	public boolean equals(Object other) {
		return (other instanceof Decision that) && this.allowed == that.allowed && this.limit == that.limit
				&& this.remaining == that.remaining && this.resetNanos == that.resetNanos
				&& this.nextNanos == that.nextNanos && this.afterNanos == that.afterNanos;
	}

	@Override
	public int hashCode() {
		return Long.hashCode(this.remaining) * 31 + Long.hashCode(this.resetNanos);
	}

	@Override
	public String toString() {
		return (this.allowed ? "allowed" : "rejected") + "(limit=" + this.limit + ", remaining=" + this.remaining
				+ ", resetNanos=" + this.resetNanos + ", nextNanos=" + this.nextNanos + ", retryAfterNanos=" + retryAfterNanos()
				+ ", waitNanos=" + waitNanos() + ")";
	}
}
