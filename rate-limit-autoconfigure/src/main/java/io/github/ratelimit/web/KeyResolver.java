package io.github.ratelimit.web;

import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

/**
 * Finds whose budget a request spends. Declare a bean and name it in a policy's {@code key} as
 * {@code @beanName}. Implementations must be thread-safe and fast: they run on every limited request.
 */
@FunctionalInterface
public interface KeyResolver {

	/**
	 * Resolves the key of a request.
	 * @param request the request
	 * @return the key, or {@code null} (or blank) to fall back to the client IP
	 */
	@Nullable String resolve(HttpServletRequest request);
}
