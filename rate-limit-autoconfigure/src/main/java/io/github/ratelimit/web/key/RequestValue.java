package io.github.ratelimit.web.key;

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

}
