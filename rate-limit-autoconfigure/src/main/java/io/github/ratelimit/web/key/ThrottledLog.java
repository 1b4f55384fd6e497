package io.github.ratelimit.web.key;

import java.time.Duration;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.CaffeineRateLimitStore;
import io.github.ratelimit.core.Limit;
import io.github.ratelimit.core.RateLimitClock;
import io.github.ratelimit.core.RateLimitStore;

/**
 * Lets a message of each kind be logged at most once per interval, and at most a number of messages per
 * interval in all (a flood of distinct kinds cannot get around the first rule), so that clients cannot
 * flood the logs: what they can cause on every request is said now and then. Thread-safe; memory bounded
 * (the last 10 000 kinds are remembered).
 */
public final class ThrottledLog {

	private final Cache<String, Boolean> recent;

	private final RateLimitStore all;

	private final Acquisition one;

	/**
	 * @param clock the time source
	 * @param interval how long a kind stays quiet after a message
	 * @param perInterval the most messages per interval in all
	 */
	public ThrottledLog(RateLimitClock clock, Duration interval, int perInterval) {
		this.recent = Caffeine.newBuilder()
			.maximumSize(10_000)
			.expireAfterWrite(interval)
			.ticker(clock::nanos)
			.executor(Runnable::run)
			.build();
		// One bucket for all messages: a store of one key.
		this.all = new CaffeineRateLimitStore(1, clock);
		this.one = new Acquisition("throttled-log", Limit.builder().limit(perInterval).period(interval).build(), "all", 1);
	}

	/**
	 * Asks whether a message of this kind may be logged now; a yes counts as logged.
	 * @param kind what the message is about, e.g. a policy and a key
	 * @return whether to log it
	 */
	public boolean tryLog(String kind) {
		return this.recent.getIfPresent(kind) == null && this.recent.asMap().putIfAbsent(kind, Boolean.TRUE) == null
				&& this.all.tryAcquire(this.one).isAllowed();
	}
}
