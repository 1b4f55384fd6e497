package io.github.ratelimit.core.caffeine;

import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.Decision;
import io.github.ratelimit.core.LimiterState;
import io.github.ratelimit.core.RateLimitClock;
import io.github.ratelimit.core.RateLimitStore;

/**
 * An in-process store: one {@link LimiterState} per (limit, key) in a Caffeine cache bounded by
 * {@code maximumSize}. Thread-safe and exact within one JVM.
 * <p>
 * Expiry never changes a decision: a state expires only after it has been left alone for as long as
 * its limit needs to become fresh again (a token bucket: the time to refill the whole burst), plus a
 * second of slack for the time between Caffeine's read of the clock and the limiter's. Reaching
 * {@code maximumSize} evicts the least valuable keys (Caffeine's W-TinyLFU); that is what keeps
 * memory bounded under a flood of distinct keys, and an evicted key starts again with a full budget.
 * <p>
 * Concurrency: a thread may still hold a state that Caffeine has just expired or evicted (its read
 * of the entry raced with the removal). So that such a thread and the threads that come after it
 * never spend two different budgets, a removed state is kept in a weak-valued side map, and the state
 * created next for that key is the very same object when anybody still holds it. Once nobody does,
 * the garbage collector clears it and the key starts afresh, as it should.
 */
public final class CaffeineRateLimitStore implements RateLimitStore {

	private static final long SLACK_NANOS = 1_000_000_000L;

	private final Cache<StoreKey, LimiterState> states;

	private final Cache<StoreKey, LimiterState> removedButReachable;

	private final RateLimitClock clock;

	/**
	 * Creates a store.
	 * @param maximumSize the most keys tracked at once; positive
	 * @param clock the time source of limiters and of expiry
	 */
	public CaffeineRateLimitStore(long maximumSize, RateLimitClock clock) {
		this(maximumSize, clock, ForkJoinPool.commonPool());
	}

	CaffeineRateLimitStore(long maximumSize, RateLimitClock clock, Executor executor) {
		if (maximumSize <= 0) {
			throw new IllegalArgumentException("maximumSize must be positive, was " + maximumSize);
		}
		this.clock = clock;
		this.removedButReachable = Caffeine.newBuilder().weakValues().executor(executor).build();
		this.states = Caffeine.newBuilder()
			.maximumSize(maximumSize)
			.ticker(clock::nanos)
			.executor(executor)
			.expireAfter(new IdleUntilFresh())
			// Called inside the atomic removal, before any new state for the key can be created.
			.<StoreKey, LimiterState>evictionListener((key, state, cause) -> {
				if (key != null && state != null) {
					this.removedButReachable.put(key, state);
				}
			})
			.build();
	}

	@Override
	public Decision tryAcquire(Acquisition acquisition) {
		return state(acquisition).tryAcquire(this.clock.nanos(), acquisition.cost(), acquisition.maxWaitNanos());
	}

	/**
	 * Checks a budget without taking anything: one read, no write, and no state created for a key that
	 * has none (a check never makes the store grow).
	 */
	@Override
	public Decision check(Acquisition acquisition) {
		StoreKey key = new StoreKey(acquisition.limitId(), acquisition.key());
		LimiterState state = this.states.getIfPresent(key);
		if (state == null) {
			// Removed while another thread still holds it: that state is the key's budget.
			state = this.removedButReachable.getIfPresent(key);
		}
		return (state != null ? state : acquisition.limit().newState()).check(this.clock.nanos(), acquisition.cost());
	}

	@Override
	public Decision release(Acquisition acquisition) {
		return state(acquisition).release(this.clock.nanos(), acquisition.cost());
	}

	/**
	 * Reads a key's state without changing it (nor its expiry).
	 * @param acquisition the budget (its cost is ignored)
	 * @return the state as a request of cost 0 would see it
	 */
	@Override
	public Decision peek(Acquisition acquisition) {
		LimiterState state = this.states.policy()
			.getIfPresentQuietly(new StoreKey(acquisition.limitId(), acquisition.key()));
		return (state != null ? state : acquisition.limit().newState()).peek(this.clock.nanos());
	}

	@Override
	public void reset(String limitId, String key) {
		this.states.invalidate(new StoreKey(limitId, key));
	}

	/**
	 * Returns how many keys are tracked (approximately, as Caffeine counts).
	 * @return the number of states held
	 */
	public long size() {
		return this.states.estimatedSize();
	}

	void cleanUp() {
		this.states.cleanUp();
	}

	private LimiterState state(Acquisition acquisition) {
		StoreKey key = new StoreKey(acquisition.limitId(), acquisition.key());
		LimiterState state = this.states.getIfPresent(key);
		if (state == null) {
			state = this.states.get(key, (k) -> {
				LimiterState removed = this.removedButReachable.asMap().remove(k);
				return (removed != null) ? removed : acquisition.limit().newState();
			});
		}
		return state;
	}

	record StoreKey(String limitId, String key) {
	}

	static final class IdleUntilFresh implements Expiry<StoreKey, LimiterState> {

		@Override
		public long expireAfterCreate(StoreKey key, LimiterState state, long currentTime) {
			return state.limit().idleNanosUntilFresh() + SLACK_NANOS;
		}

		@Override
		public long expireAfterUpdate(StoreKey key, LimiterState state, long currentTime, long currentDuration) {
			return Math.max(currentDuration, state.limit().idleNanosUntilFresh() + SLACK_NANOS);
		}

		@Override
		public long expireAfterRead(StoreKey key, LimiterState state, long currentTime, long currentDuration) {
			// A reader that took the time before a stall must not pull the expiry back in.
			return Math.max(currentDuration, state.limit().idleNanosUntilFresh() + SLACK_NANOS);
		}

	}
}
