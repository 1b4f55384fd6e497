package io.github.ratelimit.web.limiter;

import java.time.Duration;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.RateLimitClock;
import io.github.ratelimit.web.key.ThrottledLog;
import io.github.ratelimit.web.policy.RateLimitPolicy;

/**
 * Logs rejections so that an attack cannot flood the logs: every rejection at DEBUG; at most one WARN
 * per (policy, key) per interval, and at most {@value #WARNINGS_PER_INTERVAL} WARNs per interval in
 * all (a {@link ThrottledLog}). Thread-safe; memory bounded.
 */
public final class RejectionLog {

	static final int WARNINGS_PER_INTERVAL = 20;

	/** The name operators set the level of (docs/operations.md), kept when the class moved to this package. */
	static final String LOGGER_NAME = "io.github.ratelimit.web.servlet.RejectionLog";

	private static final Log logger = LogFactory.getLog(LOGGER_NAME);

	private final Log log;

	private final Duration interval;

	private final ThrottledLog warnings;

	/**
	 * Creates a log writing to this class's logger.
	 * @param clock the time source
	 * @param interval how long a key stays quiet after a WARN
	 */
	public RejectionLog(RateLimitClock clock, Duration interval) {
		this(logger, clock, interval);
	}

	RejectionLog(Log log, RateLimitClock clock, Duration interval) {
		this.log = log;
		this.interval = interval;
		this.warnings = new ThrottledLog(clock, interval, WARNINGS_PER_INTERVAL);
	}

	/**
	 * Logs a rejection (or a shadow policy's would-be rejection).
	 * @param policy the policy that rejected
	 * @param acquisition the budget it was asked for
	 * @param shadow whether the policy only observes
	 */
	void rejected(RateLimitPolicy policy, Acquisition acquisition, boolean shadow) {
		log(policy, acquisition, shadow, "rejected", "", "rejections");
	}

	/**
	 * Logs a request slowed down ({@code slow-down}), or the wait a shadow policy would have made, throttled
	 * apart from the rejections of the same key (its lockout is logged too).
	 * @param waitNanos how long it waits
	 */
	void slowed(RateLimitPolicy policy, Acquisition acquisition, long waitNanos, boolean shadow) {
		log(policy, acquisition, shadow, "slowed down", " by " + Duration.ofNanos(waitNanos), "slow-downs");
	}

	/**
	 * Logs a request of a banned key: once per ban, when it starts (throttled as rejections are, so that a
	 * flood of banned keys cannot flood the log), at DEBUG afterwards.
	 * @param policy the policy that banned
	 * @param acquisition the budget it was asked for
	 * @param restNanos the rest of the ban
	 * @param started whether this request's rejection started the ban
	 */
	void banned(RateLimitPolicy policy, Acquisition acquisition, long restNanos, boolean started) {
		if (started) {
			log(policy, acquisition, false, "banned", " for " + Duration.ofNanos(restNanos), "bans");
		}
		else if (this.log.isDebugEnabled()) {
			this.log.debug("Rate limit '" + policy.name() + "' refused banned " + printable(acquisition.key()));
		}
	}

	private void log(RateLimitPolicy policy, Acquisition acquisition, boolean shadow, String verb, String detail,
			String events) {
		String what = (shadow ? "Shadow rate limit '" : "Rate limit '") + policy.name() + "' "
				+ (shadow ? "would have " : "") + verb + " " + printable(acquisition.key()) + detail;
		if (this.log.isWarnEnabled()
				&& this.warnings.tryLog(policy.id() + '\u0000' + events + '\u0000' + acquisition.key())) {
			this.log.warn(what + " (this key's further " + events + " within " + this.interval
					+ " are logged at DEBUG)");
		}
		else if (this.log.isDebugEnabled()) {
			this.log.debug(what);
		}
	}

	/**
	 * Returns the key as it can be written in a log line: a client's control characters (a CR or LF
	 * that would start a forged line, a tab, an escape sequence) and Unicode's line and paragraph
	 * separators written as a backslash, {@code u} and four hex digits, and so is a backslash, so that no
	 * raw key looks escaped.
	 */
	static String printable(String key) {
		StringBuilder escaped = null;
		for (int i = 0; i < key.length(); i++) {
			char c = key.charAt(i);
			boolean unsafe = c < 0x20 || c == 0x7f || c == '\\' || (c >= 0x80 && c < 0xa0) || c == 0x2028 || c == 0x2029;
			if (unsafe && escaped == null) {
				escaped = new StringBuilder(key.length() + 16).append(key, 0, i);
			}
			if (escaped != null) {
				if (unsafe) {
					escaped.append(String.format("\\u%04x", (int) c));
				}
				else {
					escaped.append(c);
				}
			}
		}
		return (escaped != null) ? escaped.toString() : key;
	}
}
