package io.github.ratelimit.web.reactive;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.core.ResolvableType;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.codec.HttpMessageWriter;
import org.springframework.http.server.reactive.ServerHttpResponse;

import io.github.ratelimit.web.RateLimitResult;
import io.github.ratelimit.web.key.UnreadableRequestException;
import io.github.ratelimit.web.limiter.Problems;

/**
 * Writes the limiter's problems on WebFlux ({@link Problems}): the {@code 429} of a rejection with the
 * application's codecs (its JSON library and settings), else as plain JSON; the {@code 400} of a request
 * the limiter cannot read; the {@code 413} of a form body over {@code spring.http.codecs.max-in-memory-size}.
 * Each with {@code Cache-Control: no-store}. Thread-safe.
 */
final class ProblemWriter {

	private static final ResolvableType MEMBERS = ResolvableType.forClass(LinkedHashMap.class);

	private final Supplier<List<HttpMessageWriter<?>>> writers;

	private volatile @Nullable HttpMessageWriter<Object> writer;

	private volatile boolean resolved;

	/**
	 * Creates the writer.
	 * @param writers the application's codecs' writers, asked on the first rejection
	 */
	ProblemWriter(Supplier<List<HttpMessageWriter<?>>> writers) {
		this.writers = writers;
	}

	/** The 429 of a rejection; its status and {@code Cache-Control} are set already. */
	Mono<Void> quotaExceeded(ServerHttpResponse response, String requestUri, RateLimitResult result) {
		Map<String, Object> members = Problems.members(Problems.quotaExceeded(requestUri, result));
		HttpMessageWriter<Object> writer = writer();
		if (writer != null) {
			return writer.write(Mono.just(members), MEMBERS, MediaType.APPLICATION_PROBLEM_JSON, response, Map.of());
		}
		return write(response, Problems.toJson(members).getBytes(StandardCharsets.UTF_8));
	}

	Mono<Void> unreadable(ServerHttpResponse response, String requestUri, UnreadableRequestException ex) {
		response.setStatusCode(HttpStatus.BAD_REQUEST);
		response.getHeaders().setCacheControl("no-store");
		return write(response, Problems.unreadable(requestUri, ex));
	}

	Mono<Void> tooLarge(ServerHttpResponse response, String requestUri) {
		response.setStatusCode(HttpStatus.CONTENT_TOO_LARGE);
		response.getHeaders().setCacheControl("no-store");
		Map<String, Object> members = new LinkedHashMap<>();
		members.put("type", "about:blank");
		members.put("title", "Content Too Large");
		members.put("status", HttpStatus.CONTENT_TOO_LARGE.value());
		members.put("detail", "The form body is larger than the server reads to find whose budget it spends.");
		members.put("instance", requestUri);
		return write(response, Problems.toJson(members).getBytes(StandardCharsets.UTF_8));
	}

	private static Mono<Void> write(ServerHttpResponse response, byte[] body) {
		response.getHeaders().setContentType(MediaType.APPLICATION_PROBLEM_JSON);
		response.getHeaders().setContentLength(body.length);
		return response.writeWith(Mono.just(response.bufferFactory().wrap(body)));
	}

	@SuppressWarnings("unchecked")
	private @Nullable HttpMessageWriter<Object> writer() {
		if (!this.resolved) {
			for (HttpMessageWriter<?> candidate : this.writers.get()) {
				if (candidate.canWrite(MEMBERS, MediaType.APPLICATION_PROBLEM_JSON)) {
					this.writer = (HttpMessageWriter<Object>) candidate;
					break;
				}
			}
			this.resolved = true;
		}
		return this.writer;
	}
}
