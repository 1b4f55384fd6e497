package io.github.ratelimit.web;

import java.util.List;

import jakarta.servlet.http.HttpServletResponse;

import io.github.ratelimit.core.Decision;

/**
 * Writes the rate limit headers of a limited response, allowed or rejected, in the configured
 * {@link HeaderStyle}:
 * <ul>
 * <li>legacy: {@code X-RateLimit-Limit}, {@code X-RateLimit-Remaining}, {@code X-RateLimit-Reset}
 * (delta seconds) of the most restrictive limit;</li>
 * <li>ietf: {@code RateLimit-Policy: "api";q=100;w=60} and {@code RateLimit: "api";r=57;t=12}, one list
 * item per limit (draft-ietf-httpapi-ratelimit-headers 10/11).</li>
 * </ul>
 * A rejection also gets {@code Retry-After} (whole seconds, rounded up, at least 1) whatever the
 * style. Thread-safe.
 */
public final class RateLimitHeaders {

	static final String RETRY_AFTER = "Retry-After";

	static final String X_RATELIMIT_LIMIT = "X-RateLimit-Limit";

	static final String X_RATELIMIT_REMAINING = "X-RateLimit-Remaining";

	static final String X_RATELIMIT_RESET = "X-RateLimit-Reset";

	static final String RATELIMIT_POLICY = "RateLimit-Policy";

	static final String RATELIMIT = "RateLimit";

	private final HeaderStyle style;

	/**
	 * Creates a writer.
	 * @param style which headers to write
	 */
	public RateLimitHeaders(HeaderStyle style) {
		this.style = style;
	}

	/**
	 * Writes the headers of a result.
	 * @param result what the limits decided
	 * @param response the response, not yet committed
	 */
	public void write(RateLimitResult result, HttpServletResponse response) {
		if (!result.isAllowed()) {
			response.setHeader(RETRY_AFTER, Long.toString(result.retryAfterSeconds()));
		}
		if (this.style.legacy()) {
			Decision decision = result.decisions().get(result.mostRestrictive());
			response.setHeader(X_RATELIMIT_LIMIT, Long.toString(decision.limit()));
			response.setHeader(X_RATELIMIT_REMAINING, Long.toString(decision.remaining()));
			response.setHeader(X_RATELIMIT_RESET, Long.toString(RateLimitResult.seconds(decision.resetNanos())));
		}
		if (this.style.ietf()) {
			List<RateLimitPolicy> policies = result.policies();
			response.setHeader(RATELIMIT_POLICY, policyHeader(policies));
			StringBuilder state = new StringBuilder(24 * policies.size());
			for (int i = 0; i < policies.size(); i++) {
				Decision decision = result.decisions().get(i);
				if (i > 0) {
					state.append(", ");
				}
				state.append(policies.get(i).headerName())
					.append(";r=")
					.append(decision.remaining())
					.append(";t=")
					.append(RateLimitResult.seconds(decision.resetNanos()));
			}
			response.setHeader(RATELIMIT, state.toString());
		}
	}

	/** The policies' items, each written once when its policy was defined. */
	private static String policyHeader(List<RateLimitPolicy> policies) {
		if (policies.size() == 1) {
			return policies.get(0).policyItem();
		}
		StringBuilder header = new StringBuilder(32 * policies.size());
		for (RateLimitPolicy policy : policies) {
			if (header.length() > 0) {
				header.append(", ");
			}
			header.append(policy.policyItem());
		}
		return header.toString();
	}

	/**
	 * Quotes a name as a Structured Field string (RFC 9651): printable ASCII only, with {@code "} and
	 * {@code \} escaped; other characters become {@code ?}.
	 */
	static String sfString(String name) {
		StringBuilder quoted = new StringBuilder(name.length() + 2).append('"');
		for (int i = 0; i < name.length(); i++) {
			char c = name.charAt(i);
			if (c == '"' || c == '\\') {
				quoted.append('\\').append(c);
			}
			else if (c >= 0x20 && c <= 0x7E) {
				quoted.append(c);
			}
			else {
				quoted.append('?');
			}
		}
		return quoted.append('"').toString();
	}
}
