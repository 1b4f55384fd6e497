package io.github.ratelimit.web.key;

import java.util.concurrent.CompletableFuture;

import org.jspecify.annotations.Nullable;

/**
 * What a policy's {@code key} or {@code plan} setting reads from a request, as {@link KeyResolvers} builds
 * it. Implementations are thread-safe; one that cannot read the request throws
 * {@link UnreadableRequestException}, which refuses it.
 */
@FunctionalInterface
public interface RequestValue {

	/**
	 * Reads the value of a request.
	 * @param request the request
	 * @return the value; a key is never {@code null}, a plan is when the request names none
	 * @throws UnreadableRequestException when it cannot be read
	 */
	@Nullable String read(LimitedRequest request);

	/**
	 * Starts what reading the value awaits (an {@link io.github.ratelimit.web.AsyncRequestKeyResolver}'s answer),
	 * so that {@link #read} then finds it without blocking.
	 * @param request the request
	 * @return completed once {@code read} no longer waits (exceptionally when it will fail: {@code read} says so)
	 */
	default CompletableFuture<?> fetch(LimitedRequest request) {
		return LimitedRequest.FETCHED;
	}

}
