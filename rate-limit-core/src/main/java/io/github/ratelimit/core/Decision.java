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

	private Decision(boolean allowed, long limit, long remaining, long resetNanos, long retryAfterNanos) {
		this.allowed = allowed;
		this.limit = limit;
		this.remaining = remaining;
		this.resetNanos = resetNanos;
		this.retryAfterNanos = retryAfterNanos;
	}

	/**
	 * Creates an allowing decision.
	 * @param limit the quota per period
	 * @param remaining the tokens left after this request
	 * @param resetNanos the time until the quota is whole again
	 * @return the decision
	 */
	public static Decision allowed(long limit, long remaining, long resetNanos) {
		return new Decision(true, limit, remaining, resetNanos, 0);
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
		return new Decision(false, limit, remaining, resetNanos, Math.max(1, retryAfterNanos));
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

	@Override
	public String toString() {
		return (this.allowed ? "allowed" : "rejected") + "(limit=" + this.limit + ", remaining=" + this.remaining
				+ ", resetNanos=" + this.resetNanos + ", retryAfterNanos=" + this.retryAfterNanos + ")";
	}
}
