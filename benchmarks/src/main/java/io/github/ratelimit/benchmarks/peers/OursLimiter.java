package io.github.ratelimit.benchmarks.peers;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.CaffeineRateLimitStore;
import io.github.ratelimit.core.Decision;
import io.github.ratelimit.core.Limit;
import io.github.ratelimit.core.RateLimitClock;

/**
 * Our limiter as the filter calls it: one {@link Acquisition} per request, decided by the
 * {@link CaffeineRateLimitStore} on the system clock. Thread-safe.
 */
public final class OursLimiter {

	static final String LIMIT_ID = "api";

	private final CaffeineRateLimitStore store;

	private final Limit limit;

	/**
	 * Creates the limiter.
	 * @param policy the budget of every key
	 * @param maximumSize the store's bound on tracked keys
	 */
	public OursLimiter(Policy policy, long maximumSize) {
		this.store = new CaffeineRateLimitStore(maximumSize, RateLimitClock.SYSTEM);
		this.limit = policy.limit();
	}

	/**
	 * Decides one request of cost 1.
	 * @param key whose budget
	 * @return the decision
	 */
	public Decision tryAcquire(String key) {
		return this.store.tryAcquire(new Acquisition(LIMIT_ID, this.limit, key, 1));
	}

	/**
	 * Returns how many keys the store tracks.
	 * @return Caffeine's estimate
	 */
	public long size() {
		return this.store.size();
	}
}
