package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The breaker on a fake clock.
 */
class CircuitBreakerTests {

	private final AtomicLong nanos = new AtomicLong(1_000);

	private final CircuitBreaker breaker = new CircuitBreaker(3, Duration.ofSeconds(1).toNanos(), this.nanos::get);

	@Test
	void opensAfterTheThresholdOfFailuresInARow() {
		assertThat(this.breaker.onFailure()).isFalse();
		this.breaker.onSuccess();
		assertThat(this.breaker.onFailure()).isFalse();
		assertThat(this.breaker.onFailure()).isFalse();
		assertThat(this.breaker.tryPass()).isTrue();
		assertThat(this.breaker.onFailure()).isTrue();
		assertThat(this.breaker.state()).isEqualTo(CircuitBreaker.State.OPEN);
		assertThat(this.breaker.tryPass()).isFalse();
		// Reported once: later failures (calls that were already in flight) do not open it again.
		assertThat(this.breaker.onFailure()).isFalse();
	}

	@Test
	void letsOneProbeThroughPerIntervalAndClosesOnItsSuccess() {
		open();
		this.nanos.addAndGet(Duration.ofMillis(999).toNanos());
		assertThat(this.breaker.tryPass()).isFalse();
		this.nanos.addAndGet(Duration.ofMillis(1).toNanos());
		assertThat(this.breaker.tryPass()).isTrue();
		assertThat(this.breaker.state()).isEqualTo(CircuitBreaker.State.HALF_OPEN);
		assertThat(this.breaker.tryPass()).as("only one probe").isFalse();
		assertThat(this.breaker.onFailure()).isFalse();
		assertThat(this.breaker.state()).isEqualTo(CircuitBreaker.State.OPEN);
		assertThat(this.breaker.tryPass()).isFalse();
		this.nanos.addAndGet(Duration.ofSeconds(1).toNanos());
		assertThat(this.breaker.tryPass()).isTrue();
		assertThat(this.breaker.onSuccess()).as("outage length").isEqualTo(Duration.ofSeconds(2).toNanos());
		assertThat(this.breaker.state()).isEqualTo(CircuitBreaker.State.CLOSED);
		assertThat(this.breaker.onSuccess()).as("closing is reported once").isEqualTo(-1);
		assertThat(this.breaker.tryPass()).isTrue();
	}

	@Test
	void aProbeWhoseOutcomeNeverComesIsTakenAsLostAfterAnInterval() {
		// A coalesced probe can wait behind calls in flight and be given up before it is sent: its outcome is
		// never reported. The breaker must not stay half-open for good (every request decided by on-failure).
		open();
		this.nanos.addAndGet(Duration.ofSeconds(1).toNanos());
		assertThat(this.breaker.tryPass()).as("the probe").isTrue();
		this.nanos.addAndGet(Duration.ofMillis(999).toNanos());
		assertThat(this.breaker.tryPass()).as("still one probe per interval").isFalse();
		this.nanos.addAndGet(Duration.ofMillis(1).toNanos());
		assertThat(this.breaker.tryPass()).as("the lost probe's successor").isTrue();
		assertThat(this.breaker.tryPass()).isFalse();
		assertThat(this.breaker.onSuccess()).as("outage length").isEqualTo(Duration.ofSeconds(2).toNanos());
		assertThat(this.breaker.state()).isEqualTo(CircuitBreaker.State.CLOSED);
	}

	private void open() {
		for (int i = 0; i < 3; i++) {
			this.breaker.onFailure();
		}
		assertThat(this.breaker.state()).isEqualTo(CircuitBreaker.State.OPEN);
	}
}
