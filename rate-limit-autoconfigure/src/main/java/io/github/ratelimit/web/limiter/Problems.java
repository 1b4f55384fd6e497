package io.github.ratelimit.web.limiter;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.json.JsonWriter;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;

import io.github.ratelimit.web.RateLimitResult;
import io.github.ratelimit.web.key.UnreadableRequestException;

/**
 * The RFC 9457 problems the limiter answers with, the same on every web stack: the {@code 429} of a
 * rejection (type {@code https://iana.org/assignments/http-problem-types#quota-exceeded}, with
 * {@code violated-policies}, and {@code banned-until} when a ban refused the request) and the {@code 400} of
 * a request a policy cannot tell the key, plan or exemption of (its detail names the policy and the reason,
 * never the client's input). A problem is written as a map of members, RFC 9457's first and in its order,
 * so that an application's naming strategy leaves their names alone.
 */
public final class Problems {

	/** The problem type of draft-ietf-httpapi-ratelimit-headers. */
	public static final URI QUOTA_EXCEEDED = URI.create("https://iana.org/assignments/http-problem-types#quota-exceeded");

	private static final URI ABOUT_BLANK = URI.create("about:blank");

	private Problems() {
	}

	/**
	 * Builds the problem of a rejection.
	 * @param requestUri the rejected request's URI as the client sent it, {@code null} when unknown
	 * @param result what the limits decided
	 * @return the problem
	 */
	public static ProblemDetail quotaExceeded(@Nullable String requestUri, RateLimitResult result) {
		List<String> violated = result.violatedPolicies();
		long retryAfter = result.retryAfterSeconds();
		Instant bannedUntil = bannedUntil(result);
		String detail = "Rate limit exceeded for " + String.join(", ", violated.stream().map((n) -> "'" + n + "'").toList())
				+ ((bannedUntil != null) ? "; banned until " + bannedUntil : "") + "; retry after " + retryAfter
				+ ((retryAfter == 1) ? " second." : " seconds.");
		ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.TOO_MANY_REQUESTS, detail);
		problem.setType(QUOTA_EXCEEDED);
		problem.setTitle("Too Many Requests");
		URI instance = instance(requestUri);
		if (instance != null) {
			problem.setInstance(instance);
		}
		problem.setProperty("violated-policies", violated);
		if (bannedUntil != null) {
			problem.setProperty("banned-until", bannedUntil.toString());
		}
		return problem;
	}

	/**
	 * Builds the body of the {@code 400} of a request a policy cannot tell the key, plan or exemption of.
	 * @param requestUri the request's URI as the client sent it, {@code null} when unknown
	 * @param ex why it is refused
	 * @return the JSON, in UTF-8
	 */
	public static byte[] unreadable(@Nullable String requestUri, UnreadableRequestException ex) {
		String policy = ex.policy();
		ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.BAD_REQUEST,
				((policy != null) ? "Rate limit '" + policy + "'" : "The rate limit exemption")
						+ " cannot be applied to this request: " + ex.reason() + ".");
		problem.setType(ABOUT_BLANK);
		problem.setTitle("Bad Request");
		if (requestUri != null) {
			// As the client sent it, even when it is no URI.
			problem.setProperty("instance", requestUri);
		}
		return toJson(members(problem)).getBytes(StandardCharsets.UTF_8);
	}

	/** When the longest ban that refused the request ends, to the second; {@code null} when no ban did. */
	private static @Nullable Instant bannedUntil(RateLimitResult result) {
		List<String> banned = result.bannedPolicies();
		long nanos = 0;
		for (int i = 0; !banned.isEmpty() && i < result.policyNames().size(); i++) {
			if (banned.contains(result.policyNames().get(i))) {
				nanos = Math.max(nanos, result.decisions().get(i).retryAfterNanos());
			}
		}
		return (nanos > 0) ? Instant.now().plusNanos(nanos).truncatedTo(ChronoUnit.SECONDS) : null;
	}

	/**
	 * The request URI is percent-encoded already, as the client sent it: it is taken as it is, not
	 * encoded again (which would turn {@code %31} into {@code %2531}). Only characters a URI cannot hold
	 * (which servers rarely pass on) are quoted. An instance is optional: a path that is no URI is left
	 * out.
	 * @param requestUri the URI, {@code null} when unknown
	 * @return the instance, {@code null} when there is none
	 */
	public static @Nullable URI instance(@Nullable String requestUri) {
		if (requestUri == null) {
			return null;
		}
		try {
			return URI.create(requestUri);
		}
		catch (IllegalArgumentException ex) {
			try {
				return new URI(null, null, requestUri, null);
			}
			catch (Exception notAPath) {
				return null;
			}
		}
	}

	/**
	 * The problem's members, RFC 9457's first and in its order, then the extensions; absent ones left out.
	 * @param problem the problem
	 * @return the members
	 */
	public static Map<String, Object> members(ProblemDetail problem) {
		Map<String, Object> members = new LinkedHashMap<>();
		members.put("type", String.valueOf((problem.getType() != null) ? problem.getType() : ABOUT_BLANK));
		putIfPresent(members, "title", problem.getTitle());
		members.put("status", problem.getStatus());
		putIfPresent(members, "detail", problem.getDetail());
		putIfPresent(members, "instance", (problem.getInstance() != null) ? problem.getInstance().toString() : null);
		Map<String, Object> properties = problem.getProperties();
		if (properties != null) {
			properties.forEach((name, value) -> putIfPresent(members, name, value));
		}
		return members;
	}

	private static void putIfPresent(Map<String, Object> members, String name, @Nullable Object value) {
		if (value != null) {
			members.put(name, value);
		}
	}

	/**
	 * The plain writer: the members as compact JSON.
	 * @param members the members
	 * @return the JSON
	 */
	public static String toJson(Map<String, Object> members) {
		return JsonWriter.standard().writeToString(members);
	}
}
