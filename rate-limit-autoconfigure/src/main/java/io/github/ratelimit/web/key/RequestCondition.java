package io.github.ratelimit.web.key;

/**
 * A condition over a request, such as an exemption. Implementations are thread-safe; one that cannot
 * be evaluated throws {@link UnreadableRequestException}, which refuses the request.
 */
@FunctionalInterface
public interface RequestCondition {

	/**
	 * Tells whether the condition holds for a request.
	 * @param request the request
	 * @return {@code true} when it holds
	 * @throws UnreadableRequestException when it cannot be evaluated
	 */
	boolean test(LimitedRequest request);
}
