package io.github.ratelimit.redis.autoconfigure;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;

import io.github.ratelimit.core.OnFailure;

/**
 * Configuration of the Redis store, under {@code rate-limit.store.redis.*}; used when
 * {@code rate-limit.store.type=redis}. The connection itself is Spring Data Redis'
 * ({@code spring.data.redis.*}).
 */
@ConfigurationProperties("rate-limit.store.redis")
public class RedisRateLimitProperties {

	/**
	 * Prefix of every Redis key the rate limiter writes; a key reads <prefix>{<policy>:<key>}.
	 */
	private String keyPrefix = "rate-limit:";

	/**
	 * The most a decision may wait on Redis (connecting included); past it, on-failure decides.
	 */
	private Duration timeout = Duration.ofMillis(100);

	/**
	 * What decides when Redis is down, unreachable or slower than the timeout: allow (fail open), deny
	 * (fail closed, 429) or local (each instance enforces the limits on its own, in process).
	 */
	private OnFailure onFailure = OnFailure.ALLOW;

	/**
	 * Whether wrong credentials or an unreachable Redis (no answer within 10 s) fail the start-up instead
	 * of being logged while on-failure decides until Redis answers.
	 */
	private boolean failFast = false;

	/**
	 * The longest a rejection Redis answered is kept in process, so that a flood on a rejected key costs
	 * about one Redis call per key per Retry-After; a release on another instance is seen here within
	 * this delay, a reset or a changed policy within overrides-poll-interval (0 keeps none).
	 */
	private Duration rejectionCache = Duration.ofSeconds(1);

	/**
	 * Whether decisions that arrive while two script calls are in flight on their connection (on a cluster,
	 * their hash slot) go together in the next call, each still all or nothing (Lettuce only).
	 */
	private boolean coalescing = true;

	/**
	 * The most the start-up spends warming the decision path before the web server starts (scripts
	 * loaded, connection open, a few thousand decisions and give-backs on throwaway keys that expire within
	 * milliseconds), so that a freshly started instance reads Redis' answers in time. Skipped when Redis
	 * did not answer the start-up check; 0 turns it off.
	 */
	private Duration warmUp = Duration.ofSeconds(2);

	/**
	 * How often each instance reads whether a policy was changed at run time (or a key reset) on another
	 * instance: one GET of a counter; a change reaches every instance within this delay. At least 100 ms.
	 */
	private Duration overridesPollInterval = Duration.ofSeconds(1);

	/**
	 * How long a slot of a concurrency limit outlives its last refresh, in Redis' time: leases of requests
	 * in flight are refreshed every third of it, so an instance that dies frees its slots within it. At
	 * least 100 ms.
	 */
	private Duration leaseExpiry = Duration.ofSeconds(5);

	/**
	 * The breaker that stops waiting for a Redis that keeps failing.
	 */
	private final Breaker breaker = new Breaker();

	public String getKeyPrefix() {
		return this.keyPrefix;
	}

	public void setKeyPrefix(String keyPrefix) {
		this.keyPrefix = keyPrefix;
	}

	public Duration getTimeout() {
		return this.timeout;
	}

	public void setTimeout(Duration timeout) {
		this.timeout = timeout;
	}

	public OnFailure getOnFailure() {
		return this.onFailure;
	}

	public void setOnFailure(OnFailure onFailure) {
		this.onFailure = onFailure;
	}

	public boolean isFailFast() {
		return this.failFast;
	}

	public void setFailFast(boolean failFast) {
		this.failFast = failFast;
	}

	public Duration getRejectionCache() {
		return this.rejectionCache;
	}

	public void setRejectionCache(Duration rejectionCache) {
		this.rejectionCache = rejectionCache;
	}

	public boolean isCoalescing() {
		return this.coalescing;
	}

	public void setCoalescing(boolean coalescing) {
		this.coalescing = coalescing;
	}

	public Duration getWarmUp() {
		return this.warmUp;
	}

	public void setWarmUp(Duration warmUp) {
		this.warmUp = warmUp;
	}

	public Duration getOverridesPollInterval() {
		return this.overridesPollInterval;
	}

	public void setOverridesPollInterval(Duration overridesPollInterval) {
		this.overridesPollInterval = overridesPollInterval;

	}

	public Duration getLeaseExpiry() {
		return this.leaseExpiry;
	}

	public void setLeaseExpiry(Duration leaseExpiry) {
		this.leaseExpiry = leaseExpiry;
	}

	public Breaker getBreaker() {
		return this.breaker;
	}

	/**
	 * The breaker that stops waiting for a Redis that keeps failing.
	 */
	public static class Breaker {

		/**
		 * Failed Redis calls in a row that open the breaker; while open, on-failure decides at once.
		 */
		private int failureThreshold = 3;

		/**
		 * How often an open breaker lets one request try Redis again; its success closes the breaker.
		 */
		private Duration probeInterval = Duration.ofSeconds(1);

		public int getFailureThreshold() {
			return this.failureThreshold;
		}

		public void setFailureThreshold(int failureThreshold) {
			this.failureThreshold = failureThreshold;
		}

		public Duration getProbeInterval() {
			return this.probeInterval;
		}

		public void setProbeInterval(Duration probeInterval) {
			this.probeInterval = probeInterval;
		}

	}
}
