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

	private final long retryAfterNanos;

	private final long waitNanos;

	private Decision(boolean allowed, long limit, long remaining, long resetNanos, long retryAfterNanos,
			long waitNanos) {
		this.allowed = allowed;
		this.limit = limit;
		this.remaining = remaining;
		this.resetNanos = resetNanos;
		this.retryAfterNanos = retryAfterNanos;
		this.waitNanos = waitNanos;
	}

	/**
	 * Creates an allowing decision.
	 * @param limit the quota per period
	 * @param remaining the tokens left after this request
	 * @param resetNanos the time until the quota is whole again
	 * @return the decision
	 */
	public static Decision allowed(long limit, long remaining, long resetNanos) {
		return new Decision(true, limit, remaining, resetNanos, 0, 0);
	}

	/**
	 * Creates a decision that allows the request once it has waited for its turn (delay mode); the
	 * tokens are already taken.
	 * @param limit the quota per period
	 * @param remaining the tokens left after this request
	 * @param resetNanos the time until the quota is whole again
	 * @param waitNanos how long the request must wait before it proceeds
	 * @return the decision
	 */
	public static Decision delayed(long limit, long remaining, long resetNanos, long waitNanos) {
		return new Decision(true, limit, remaining, resetNanos, 0, Math.max(0, waitNanos));
	}

	/**
	 * Creates a rejecting decision.
	 * @param limit the quota per period
	 * @param remaining the tokens left (fewer than the request needed)
	 * @param resetNanos the time until the quota is whole again
	 * @param retryAfterNanos the time until the same request would be allowed; positive
	 * @return the decision
	 */
	public static Decision rejected(long limit, long remaining, long resetNanos, long retryAfterNanos) {
		return new Decision(false, limit, remaining, resetNanos, Math.max(1, retryAfterNanos), 0);
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
	 * Returns the time until the same request would be allowed; zero when it was allowed.
	 * @return nanoseconds
	 */
	public long retryAfterNanos() {
		return this.retryAfterNanos;
	}

	/**
	 * Returns how long an allowed request must wait before it proceeds (delay mode); zero otherwise.
	 * @return nanoseconds
	 */
	public long waitNanos() {
		return this.waitNanos;
	}

	@Override
	public boolean equals(Object other) {
		return (other instanceof Decision that) && this.allowed == that.allowed && this.limit == that.limit
				&& this.remaining == that.remaining && this.resetNanos == that.resetNanos
				&& this.retryAfterNanos == that.retryAfterNanos && this.waitNanos == that.waitNanos;
	}

	@Override
	public int hashCode() {
		return Long.hashCode(this.remaining) * 31 + Long.hashCode(this.resetNanos);
	}

	@Override
	public String toString() {
		return (this.allowed ? "allowed" : "rejected") + "(limit=" + this.limit + ", remaining=" + this.remaining
				+ ", resetNanos=" + this.resetNanos + ", retryAfterNanos=" + this.retryAfterNanos + ", waitNanos="
				+ this.waitNanos + ")";
	}
}
