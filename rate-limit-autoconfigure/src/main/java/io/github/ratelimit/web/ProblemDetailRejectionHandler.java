package io.github.ratelimit.web;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.List;
import java.util.Map;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;

/**
 * Answers a rejection with {@code 429 Too Many Requests}, {@code Cache-Control: no-store} and an
 * RFC 9457 {@code application/problem+json} body of type
 * {@code https://iana.org/assignments/http-problem-types#quota-exceeded}, with the extension member
 * {@code violated-policies}. Thread-safe.
 */
public class ProblemDetailRejectionHandler implements RateLimitRejectionHandler {

	/** The problem type of draft-ietf-httpapi-ratelimit-headers. */
	public static final URI QUOTA_EXCEEDED = URI.create("https://iana.org/assignments/http-problem-types#quota-exceeded");

	@Override
	public void reject(HttpServletRequest request, HttpServletResponse response, RateLimitResult result)
			throws IOException {
		ProblemDetail problem = problem(request, result);
		byte[] body = toJson(problem).getBytes(StandardCharsets.UTF_8);
		response.setStatus(HttpStatus.TOO_MANY_REQUESTS.value());
		response.setHeader("Cache-Control", "no-store");
		response.setContentType(MediaType.APPLICATION_PROBLEM_JSON_VALUE);
		response.setContentLength(body.length);
		response.getOutputStream().write(body);
	}

	/**
	 * Builds the problem; override to add members.
	 * @param request the rejected request
	 * @param result what the limits decided
	 * @return the problem
	 */
	protected ProblemDetail problem(HttpServletRequest request, RateLimitResult result) {
		List<String> violated = result.violatedPolicies();
		long retryAfter = result.retryAfterSeconds();
		String detail = "Rate limit exceeded for " + String.join(", ", violated.stream().map((n) -> "'" + n + "'").toList())
				+ "; retry after " + retryAfter + ((retryAfter == 1) ? " second." : " seconds.");
		ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.TOO_MANY_REQUESTS, detail);
		problem.setType(QUOTA_EXCEEDED);
		problem.setTitle("Too Many Requests");
		URI instance = instance(request.getRequestURI());
		if (instance != null) {
			problem.setInstance(instance);
		}
		problem.setProperty("violated-policies", violated);
		return problem;
	}

	/**
	 * The request URI is percent-encoded already, as the client sent it: it is taken as it is, not
	 * encoded again (which would turn {@code %31} into {@code %2531}). Only characters a URI cannot hold
	 * (which servers rarely pass on) are quoted. An instance is optional: a path that is no URI is left
	 * out.
	 */
	static @Nullable URI instance(@Nullable String requestUri) {
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

	static String toJson(ProblemDetail problem) {
		StringBuilder json = new StringBuilder(256).append('{');
		member(json, "type", problem.getType().toString());
		member(json, "title", problem.getTitle());
		member(json, "status", problem.getStatus());
		member(json, "detail", problem.getDetail());
		member(json, "instance", (problem.getInstance() != null) ? problem.getInstance().toString() : null);
		Map<String, Object> properties = problem.getProperties();
		if (properties != null) {
			properties.forEach((name, value) -> member(json, name, value));
		}
		return json.append('}').toString();
	}

	private static void member(StringBuilder json, String name, Object value) {
		if (value == null) {
			return;
		}
		if (json.length() > 1) {
			json.append(',');
		}
		string(json, name);
		json.append(':');
		value(json, value);
	}

	private static void value(StringBuilder json, Object value) {
		if (value instanceof Number || value instanceof Boolean) {
			json.append(value);
		}
		else if (value instanceof Collection<?> collection) {
			json.append('[');
			boolean first = true;
			for (Object element : collection) {
				if (!first) {
					json.append(',');
				}
				first = false;
				value(json, element);
			}
			json.append(']');
		}
		else if (value == null) {
			json.append("null");
		}
		else {
			string(json, value.toString());
		}
	}

	private static void string(StringBuilder json, String value) {
		json.append('"');
		for (int i = 0; i < value.length(); i++) {
			char c = value.charAt(i);
			switch (c) {
				case '"' -> json.append("\\\"");
				case '\\' -> json.append("\\\\");
				case '\n' -> json.append("\\n");
				case '\r' -> json.append("\\r");
				case '\t' -> json.append("\\t");
				default -> {
					if (c < 0x20 || c == '\u2028' || c == '\u2029') {
						json.append(String.format("\\u%04x", (int) c));
					}
					else {
						json.append(c);
					}
				}
			}
		}
		json.append('"');
	}
}
