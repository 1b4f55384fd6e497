package io.github.ratelimit.web.key;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.test.ManualClock;

import static org.assertj.core.api.Assertions.assertThat;

class ThrottledLogTests {

	private final ManualClock clock = new ManualClock();

	private final ThrottledLog log = new ThrottledLog(this.clock, Duration.ofMinutes(1), 2);

	@Test
	void eachKindOncePerIntervalAndSoManyInAll() {
		assertThat(this.log.tryLog("a")).isTrue();
		assertThat(this.log.tryLog("a")).isFalse();
		assertThat(this.log.tryLog("b")).isTrue();
		assertThat(this.log.tryLog("c")).as("two in all per interval").isFalse();
		this.clock.advance(Duration.ofSeconds(59));
		assertThat(this.log.tryLog("a")).isFalse();
		this.clock.advance(Duration.ofSeconds(2));
		assertThat(this.log.tryLog("a")).isTrue();
		assertThat(this.log.tryLog("b")).isTrue();
	}
}
