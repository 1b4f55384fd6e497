package io.github.ratelimit.web.limiter;

import java.util.Collection;
import java.util.List;
import java.util.StringJoiner;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.core.Decision;
import io.github.ratelimit.web.HeaderStyle;
import io.github.ratelimit.web.policy.RateLimitPolicy;

/**
 * Writes the rate limit headers of a limited response, allowed or rejected, in the configured
 * {@link HeaderStyle}:
 * <ul>
 * <li>legacy: {@code X-RateLimit-Limit}, {@code X-RateLimit-Remaining}, {@code X-RateLimit-Reset}
 * (delta seconds) of the most restrictive limit;</li>
 * <li>ietf: {@code RateLimit-Policy: "api";q=100;w=60} and {@code RateLimit: "api";r=57;t=1}, one list
 * item per limit (draft-ietf-httpapi-ratelimit-headers 10/11), {@code t} being the seconds (rounded
 * up) until additional quota is made available ({@link io.github.ratelimit.core.Decision#nextNanos()}),
 * not until the quota is whole;</li>
 * <li>draft-6: {@code RateLimit-Limit}, {@code RateLimit-Remaining}, {@code RateLimit-Reset} (delta
 * seconds until the quota is whole, like {@code X-RateLimit-Reset}) of the most restrictive limit.</li>
 * </ul>
 * Several styles may be combined.
 * A concurrency limit ({@code algorithm: concurrency}) reads {@code "uploads";q=2;qu="concurrent-requests"}
 * (no {@code w}) and {@code "uploads";r=1} (the free slots, no {@code t}); when it is the most
 * restrictive limit, the remaining fields are its free slots and no reset field is sent.
 * A rejection also gets {@code Retry-After} (whole seconds, rounded up, at least 1) whatever the
 * style. Thread-safe.
 */
public final class RateLimitHeaders {

	static final String RETRY_AFTER = "Retry-After";

	static final String X_RATELIMIT_LIMIT = "X-RateLimit-Limit";

	static final String X_RATELIMIT_REMAINING = "X-RateLimit-Remaining";

	static final String X_RATELIMIT_RESET = "X-RateLimit-Reset";

	static final String RATELIMIT_LIMIT = "RateLimit-Limit";

	static final String RATELIMIT_REMAINING = "RateLimit-Remaining";

	static final String RATELIMIT_RESET = "RateLimit-Reset";

	static final String RATELIMIT_POLICY = "RateLimit-Policy";

	static final String RATELIMIT = "RateLimit";

	/** The texts of 0 to 1023: remaining counts and seconds until a reset are mostly among them. */
	private static final String[] SMALL_NUMBERS = new String[1024];

	static {
		for (int i = 0; i < SMALL_NUMBERS.length; i++) {
			SMALL_NUMBERS[i] = Integer.toString(i);
		}
	}

	private final boolean legacy;

	private final boolean ietf;

	private final boolean draft6;

	/**
	 * Creates a writer of several styles.
	 * @param styles which headers to write, e.g. {@code [LEGACY, DRAFT_6]}
	 */
	public RateLimitHeaders(Collection<HeaderStyle> styles) {
		this.legacy = styles.contains(HeaderStyle.BOTH) || styles.contains(HeaderStyle.LEGACY);
		this.ietf = styles.contains(HeaderStyle.BOTH) || styles.contains(HeaderStyle.IETF);
		this.draft6 = styles.contains(HeaderStyle.DRAFT_6);
	}

	/**
	 * Sets a header, or removes one an earlier write of the same request left (its path rules' headers,
	 * written before Spring Security's filters, then the joined result's).
	 */
	private static void setOrRemove(ResponseHeaders response, String name, @Nullable String value) {
		if (value != null) {
			response.set(name, value);
		}
		else {
			response.remove(name);
		}
	}

	/**
	 * Writes the headers of a result.
	 * @param result what the limits decided
	 * @param response the response, not yet committed
	 */
	public void write(RequestDecision result, ResponseHeaders response) {
		if (!result.isAllowed()) {
			response.set(RETRY_AFTER, text(result.retryAfterSeconds()));
		}
		if (this.legacy || this.draft6) {
			Check mostRestrictive = result.mostRestrictive();
			Decision decision = mostRestrictive.decision();
			RateLimitPolicy policy = mostRestrictive.policy();
			String limit = policy.limitText(decision.limit());
			String remaining = text(decision.remaining());
			// A concurrency limit is whole again when requests end, which no time can tell: no reset.
			String reset = policy.isConcurrency() ? null : text(RequestDecision.seconds(decision.resetNanos()));
			if (this.legacy) {
				response.set(X_RATELIMIT_LIMIT, limit);
				response.set(X_RATELIMIT_REMAINING, remaining);
				setOrRemove(response, X_RATELIMIT_RESET, reset);
			}
			if (this.draft6) {
				response.set(RATELIMIT_LIMIT, limit);
				response.set(RATELIMIT_REMAINING, remaining);
				setOrRemove(response, RATELIMIT_RESET, reset);
			}
		}
		if (this.ietf) {
			List<Check> checks = result.checks();
			response.set(RATELIMIT_POLICY, items(checks, (check) -> check.policy().policyItem()));
			response.set(RATELIMIT, items(checks, RateLimitHeaders::stateItem));
		}
	}

	/** One policy's item of the {@code RateLimit} header, built in one concatenation: {@code "api";r=57;t=1}. */
	private static String stateItem(Check check) {
		RateLimitPolicy policy = check.policy();
		Decision decision = check.decision();
		// A concurrency limit's quota comes back when a request ends, not after a time: no t.
		return policy.isConcurrency() ? policy.stateItemPrefix() + decision.remaining()
				: policy.stateItemPrefix() + decision.remaining() + ";t=" + RequestDecision.seconds(decision.nextNanos());
	}

	/** A list header of one item per check; the policies' items were each written once, when the policy was defined. */
	private static String items(List<Check> checks, Function<Check, String> item) {
		if (checks.size() == 1) {
			return item.apply(checks.get(0));
		}
		StringJoiner header = new StringJoiner(", ");
		for (Check check : checks) {
			header.add(item.apply(check));
		}
		return header.toString();
	}

	/** The decimal text of a header value; the small values headers mostly carry are written once. */
	static String text(long value) {
		return (value >= 0 && value < SMALL_NUMBERS.length) ? SMALL_NUMBERS[(int) value] : Long.toString(value);
	}

}
