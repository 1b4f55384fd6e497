package io.github.ratelimit.web.limiter;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.apache.commons.logging.Log;
import org.junit.jupiter.api.Test;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.test.ManualClock;
import io.github.ratelimit.web.CountMode;
import io.github.ratelimit.web.OnLimit;
import io.github.ratelimit.web.clientip.ClientIpResolver;
import io.github.ratelimit.web.key.KeyResolvers;
import io.github.ratelimit.web.policy.PolicyDefinition;
import io.github.ratelimit.web.policy.RateLimitPolicy;
import io.github.ratelimit.web.policy.TestPolicies;

import static org.assertj.core.api.Assertions.assertThat;

class RejectionLogTests {

	private final ManualClock clock = new ManualClock();

	private final RecordingLog log = new RecordingLog();

	private final RejectionLog rejections = new RejectionLog(this.log, this.clock, Duration.ofMinutes(1));

	private final RateLimitPolicy policy = TestPolicies.define(new PolicyDefinition("api", "api", "test",
			false, Algorithm.TOKEN_BUCKET, 1L, Duration.ofSeconds(1), null, "ip", 1, OnLimit.REJECT, Duration.ZERO,
			CountMode.ALL, false), new KeyResolvers(ClientIpResolver.builder().build(), null));

	@Test
	void oneWarningPerKeyPerIntervalTheRestAtDebug() {
		for (int i = 0; i < 100; i++) {
			this.rejections.rejected(this.policy, acquisition("ip:1.2.3.4"), false);
		}
		assertThat(this.log.warnings).containsExactly(
				"Rate limit 'api' rejected ip:1.2.3.4 (this key's further rejections within PT1M are logged at DEBUG)");
		assertThat(this.log.debugs).hasSize(99);
		this.clock.advance(Duration.ofSeconds(61));
		this.rejections.rejected(this.policy, acquisition("ip:1.2.3.4"), false);
		assertThat(this.log.warnings).hasSize(2);
	}

	@Test
	void aFloodOfDistinctKeysCannotFloodTheLog() {
		for (int i = 0; i < 10_000; i++) {
			this.rejections.rejected(this.policy, acquisition("ip:10.0." + (i / 256) + "." + (i % 256)), false);
		}
		assertThat(this.log.warnings).hasSize(RejectionLog.WARNINGS_PER_INTERVAL);
	}

	@Test
	void aKeyCannotForgeALogLine() {
		// A username of "m\r\n2026-12-02 INFO admin logged in" would otherwise start a line of its own.
		this.rejections.rejected(this.policy, acquisition("param:m\r\n2026-12-02 INFO admin logged in"), false);
		this.rejections.rejected(this.policy, acquisition("param:a\u2028b\u001b[31m\\u000a\u0085"), false);
		assertThat(this.log.warnings).containsExactly(
				"Rate limit 'api' rejected param:m\\u000d\\u000a2026-12-02 INFO admin logged in (this key's further "
						+ "rejections within PT1M are logged at DEBUG)",
				"Rate limit 'api' rejected param:a\\u2028b\\u001b[31m\\u005cu000a\\u0085 (this key's further "
						+ "rejections within PT1M are logged at DEBUG)");
		assertThat(RejectionLog.printable("ip:2001:db8::/64")).isEqualTo("ip:2001:db8::/64");
		assertThat(RejectionLog.printable("param:ａｌｉｃｅ")).isEqualTo("param:ａｌｉｃｅ");
	}

	@Test
	void shadowRejectionsSaySo() {
		this.rejections.rejected(this.policy, acquisition("user:alice"), true);
		assertThat(this.log.warnings.get(0)).startsWith("Shadow rate limit 'api' would have rejected user:alice");
	}

	@Test
	void aSlowDownAndABanAreThrottledApartFromTheKeysRejectionsAndABanIsLoggedWhenItStarts() {
		this.rejections.slowed(this.policy, acquisition("param:alice"), 2_000_000_000L, false);
		this.rejections.slowed(this.policy, acquisition("param:alice"), 4_000_000_000L, false);
		this.rejections.rejected(this.policy, acquisition("param:alice"), false);
		this.rejections.banned(this.policy, acquisition("param:alice"), 900_000_000_000L, true);
		for (int i = 0; i < 10; i++) {
			this.rejections.banned(this.policy, acquisition("param:alice"), 899_000_000_000L, false);
		}
		this.rejections.slowed(this.policy, acquisition("param:bob"), 1_000_000_000L, true);
		assertThat(this.log.warnings).containsExactly(
				"Rate limit 'api' slowed down param:alice by PT2S (this key's further slow-downs within PT1M are logged at DEBUG)",
				"Rate limit 'api' rejected param:alice (this key's further rejections within PT1M are logged at DEBUG)",
				"Rate limit 'api' banned param:alice for PT15M (this key's further bans within PT1M are logged at DEBUG)",
				"Shadow rate limit 'api' would have slowed down param:bob by PT1S (this key's further slow-downs within PT1M "
						+ "are logged at DEBUG)");
		assertThat(this.log.debugs).hasSize(11);
	}

	private Acquisition acquisition(String key) {
		return new Acquisition("api", this.policy.limit(), key, 1);
	}

	static final class RecordingLog implements Log {

		final List<String> warnings = new ArrayList<>();

		final List<String> debugs = new ArrayList<>();

		@Override
		public boolean isWarnEnabled() {
			return true;
		}

		@Override
		public boolean isDebugEnabled() {
			return true;
		}

		@Override
		public void warn(Object message) {
			this.warnings.add(message.toString());
		}

		@Override
		public void debug(Object message) {
			this.debugs.add(message.toString());
		}

		// @formatter:off
		@Override public void debug(Object message, Throwable t) { debug(message); }
		@Override public void warn(Object message, Throwable t) { warn(message); }
		@Override public void error(Object message) { }
		@Override public void error(Object message, Throwable t) { }
		@Override public void fatal(Object message) { }
		@Override public void fatal(Object message, Throwable t) { }
		@Override public void info(Object message) { }
		@Override public void info(Object message, Throwable t) { }
		@Override public void trace(Object message) { }
		@Override public void trace(Object message, Throwable t) { }
		@Override public boolean isErrorEnabled() { return true; }
		@Override public boolean isFatalEnabled() { return true; }
		@Override public boolean isInfoEnabled() { return true; }
		@Override public boolean isTraceEnabled() { return false; }
		// @formatter:on

	}
}
