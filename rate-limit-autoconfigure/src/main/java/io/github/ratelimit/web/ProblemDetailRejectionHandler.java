package io.github.ratelimit.web;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.json.JsonWriter;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.converter.HttpMessageConverter;
import org.springframework.http.server.ServletServerHttpResponse;

/**
 * Answers a rejection with {@code 429 Too Many Requests}, {@code Cache-Control: no-store} and an
 * RFC 9457 {@code application/problem+json} body of type
 * {@code https://iana.org/assignments/http-problem-types#quota-exceeded}, with the extension member
 * {@code violated-policies}, and {@code banned-until} (an RFC 3339 time) when a ban refused the request.
 * <p>
 * The body is written by the application's own HTTP message converters (those Spring MVC writes its
 * responses with), so the application's JSON library and settings apply. Its members keep their
 * RFC 9457 names whatever the application's naming strategy: the problem is handed to the converter
 * as a map of members (names a naming strategy leaves alone), extensions at the top level. With no
 * converter that writes {@code application/problem+json} (no JSON library), a plain writer writes the
 * same JSON. Thread-safe.
 */
public class ProblemDetailRejectionHandler implements RateLimitRejectionHandler {

	/** The problem type of draft-ietf-httpapi-ratelimit-headers. */
	public static final URI QUOTA_EXCEEDED = URI.create("https://iana.org/assignments/http-problem-types#quota-exceeded");

	private final Supplier<List<HttpMessageConverter<?>>> converters;

	private volatile @Nullable HttpMessageConverter<Object> converter;

	private volatile boolean resolved;

	/**
	 * Creates a handler that writes the JSON itself.
	 */
	public ProblemDetailRejectionHandler() {
		this(List::of);
	}

	/**
	 * Creates a handler that writes the body with the first of the given converters that writes
	 * {@code application/problem+json}, else itself.
	 * @param converters the application's message converters, asked on the first rejection
	 */
	public ProblemDetailRejectionHandler(Supplier<List<HttpMessageConverter<?>>> converters) {
		this.converters = converters;
	}

	@Override
	public void reject(HttpServletRequest request, HttpServletResponse response, RateLimitResult result)
			throws IOException {
		Map<String, Object> members = members(problem(request, result));
		response.setStatus(HttpStatus.TOO_MANY_REQUESTS.value());
		response.setHeader("Cache-Control", "no-store");
		HttpMessageConverter<Object> converter = converter();
		if (converter != null) {
			ServletServerHttpResponse output = new ServletServerHttpResponse(response);
			converter.write(members, MediaType.APPLICATION_PROBLEM_JSON, output);
			output.flush();
			return;
		}
		byte[] body = toJson(members).getBytes(StandardCharsets.UTF_8);
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
		Instant bannedUntil = bannedUntil(result);
		String detail = "Rate limit exceeded for " + String.join(", ", violated.stream().map((n) -> "'" + n + "'").toList())
				+ ((bannedUntil != null) ? "; banned until " + bannedUntil : "") + "; retry after " + retryAfter
				+ ((retryAfter == 1) ? " second." : " seconds.");
		ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.TOO_MANY_REQUESTS, detail);
		problem.setType(QUOTA_EXCEEDED);
		problem.setTitle("Too Many Requests");
		URI instance = instance(request.getRequestURI());
		if (instance != null) {
			problem.setInstance(instance);
		}
		problem.setProperty("violated-policies", violated);
		if (bannedUntil != null) {
			problem.setProperty("banned-until", bannedUntil.toString());
		}
		return problem;
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

	/**
	 * The problem's members, RFC 9457's first and in its order, then the extensions; absent ones left out.
	 */
	static Map<String, Object> members(ProblemDetail problem) {
		Map<String, Object> members = new LinkedHashMap<>();
		members.put("type", problem.getType().toString());
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

	@SuppressWarnings("unchecked")
	private @Nullable HttpMessageConverter<Object> converter() {
		if (!this.resolved) {
			for (HttpMessageConverter<?> candidate : this.converters.get()) {
				if (candidate.canWrite(LinkedHashMap.class, MediaType.APPLICATION_PROBLEM_JSON)) {
					this.converter = (HttpMessageConverter<Object>) candidate;
					break;
				}
			}
			this.resolved = true;
		}
		return this.converter;
	}

	/** The plain writer: the members as compact JSON. */
	static String toJson(Map<String, Object> members) {
		return JsonWriter.standard().writeToString(members);
	}
}
