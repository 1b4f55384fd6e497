package io.github.ratelimit.redis;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;

/**
 * Stops calling Redis while it keeps failing. Closed: every call goes through, and
 * {@code failureThreshold} failures with no success in between open it. Open: no call goes through
 * until {@code probeIntervalNanos} have passed; then one call (the probe) goes through, and the breaker
 * is half-open. The probe's success closes the breaker, its failure opens it for another
 * interval. A probe whose outcome is never reported (it waited behind other calls and was given up
 * before it was sent) is taken as lost once another interval has passed, and the next call is a probe:
 * one call per interval at most, and never a breaker half-open for good. The methods that change the
 * state say so, so that the caller logs each transition once.
 * <p>
 * Thread-safe without locks: the state, the instant it was entered and the instant the outage began
 * are one immutable value swapped by compare-and-set, so exactly one caller wins each transition.
 */
final class CircuitBreaker {

	enum State {

		CLOSED, OPEN, HALF_OPEN

	}

	private record Status(State state, long since, long outageStart) {
	}

	private final int failureThreshold;

	private final long probeIntervalNanos;

	private final LongSupplier nanoTime;

	private final AtomicInteger failures = new AtomicInteger();

	private final AtomicReference<Status> status;

	/**
	 * Creates a closed breaker.
	 * @param failureThreshold at least 1, and {@code probeIntervalNanos} positive (validated by {@link RedisSettings})
	 */
	CircuitBreaker(int failureThreshold, long probeIntervalNanos, LongSupplier nanoTime) {
		this.failureThreshold = failureThreshold;
		this.probeIntervalNanos = probeIntervalNanos;
		this.nanoTime = nanoTime;
		long now = nanoTime.getAsLong();
		this.status = new AtomicReference<>(new Status(State.CLOSED, now, now));
	}

	/**
	 * Asks whether a call may go to Redis now.
	 * @return {@code true} when closed, or when this call is the probe of an open breaker (or of a half-open
	 * one whose probe has been out for a whole interval without an outcome)
	 */
	boolean tryPass() {
		Status current = this.status.get();
		if (current.state() == State.CLOSED) {
			return true;
		}
		long now = this.nanoTime.getAsLong();
		return now - current.since() >= this.probeIntervalNanos
				&& this.status.compareAndSet(current, new Status(State.HALF_OPEN, now, current.outageStart()));
	}

	/**
	 * Records a call that Redis answered.
	 * @return when this call closed the breaker, how long it had not been closed (nanoseconds); else -1
	 */
	long onSuccess() {
		if (this.failures.get() != 0) {
			// Read first: every decision succeeds, and a write per decision would bounce the line between cores.
			this.failures.set(0);
		}
		Status current = this.status.get();
		while (current.state() != State.CLOSED) {
			long now = this.nanoTime.getAsLong();
			if (this.status.compareAndSet(current, new Status(State.CLOSED, now, now))) {
				return now - current.outageStart();
			}
			current = this.status.get();
		}
		return -1;
	}

	/**
	 * Records a call that Redis did not answer in time, or answered with an error.
	 * @return {@code true} when this failure opened a closed breaker
	 */
	boolean onFailure() {
		Status current = this.status.get();
		long now = this.nanoTime.getAsLong();
		if (current.state() == State.HALF_OPEN) {
			// The probe failed: wait another interval.
			this.status.compareAndSet(current, new Status(State.OPEN, now, current.outageStart()));
			return false;
		}
		return this.failures.incrementAndGet() >= this.failureThreshold && current.state() == State.CLOSED
				&& this.status.compareAndSet(current, new Status(State.OPEN, now, now));
	}

	State state() {
		return this.status.get().state();
	}
}
