package io.github.ratelimit.web;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.converter.HttpMessageConverter;
import org.springframework.http.server.ServletServerHttpResponse;
import org.springframework.util.function.SingletonSupplier;

import io.github.ratelimit.web.limiter.Problems;

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
	public static final URI QUOTA_EXCEEDED = Problems.QUOTA_EXCEEDED;

	/** The first converter that writes {@code application/problem+json}, looked for once; none to write it here. */
	private final Supplier<Optional<HttpMessageConverter<Object>>> converter;

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
	@SuppressWarnings("unchecked")
	public ProblemDetailRejectionHandler(Supplier<List<HttpMessageConverter<?>>> converters) {
		this.converter = SingletonSupplier.of(() -> converters.get().stream()
			.filter((candidate) -> candidate.canWrite(LinkedHashMap.class, MediaType.APPLICATION_PROBLEM_JSON))
			.findFirst()
			.map((candidate) -> (HttpMessageConverter<Object>) candidate));
	}

	@Override
	public void reject(HttpServletRequest request, HttpServletResponse response, RateLimitResult result)
			throws IOException {
		Map<String, Object> members = Problems.members(problem(request, result));
		response.setStatus(HttpStatus.TOO_MANY_REQUESTS.value());
		response.setHeader("Cache-Control", "no-store");
		Optional<HttpMessageConverter<Object>> converter = this.converter.get();
		if (converter.isPresent()) {
			ServletServerHttpResponse output = new ServletServerHttpResponse(response);
			converter.get().write(members, MediaType.APPLICATION_PROBLEM_JSON, output);
			output.flush();
			return;
		}
		byte[] body = Problems.toJson(members).getBytes(StandardCharsets.UTF_8);
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
		return Problems.quotaExceeded(request.getRequestURI(), result);
	}
}
