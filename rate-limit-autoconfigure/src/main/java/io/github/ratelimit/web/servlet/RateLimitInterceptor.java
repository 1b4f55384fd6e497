package io.github.ratelimit.web.servlet;

import java.io.IOException;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

import org.springframework.core.Ordered;
import org.springframework.web.servlet.HandlerExceptionResolver;
import org.springframework.web.servlet.HandlerInterceptor;
import org.springframework.web.servlet.ModelAndView;

/**
 * Moves a request's {@link RateLimitExchange} to its decision once Spring MVC knows where the request
 * goes: in {@link #preHandle} when the dispatcher has found the handler (its own lookup, so resolution is
 * exact and the handler's URI template variables are there for keys), or in {@link #resolveException}
 * when the lookup failed (404, 405, 406, 415, ...), before the error response is written, so that a
 * scanner still spends its budget and gets its 429. Acts only on exchanges the {@link RateLimitFilter}
 * opened, on their first dispatch, and only once. Registered for every handler mapping (a
 * {@code MappedInterceptor}) and first among the exception resolvers. Stateless.
 */
final class RateLimitInterceptor implements HandlerInterceptor, HandlerExceptionResolver, Ordered {

	@Override
	public boolean preHandle(HttpServletRequest request, HttpServletResponse response, Object handler)
			throws IOException {
		RateLimitExchange exchange = RateLimitExchange.undecided(request);
		return exchange == null || exchange.decideHandler(request, handler, response);
	}

	@Override
	public @Nullable ModelAndView resolveException(HttpServletRequest request, HttpServletResponse response,
			@Nullable Object handler, Exception ex) {
		RateLimitExchange exchange = RateLimitExchange.undecided(request);
		if (exchange == null) {
			return null;
		}
		try {
			// Handled (an empty view) when rejected; else the other resolvers answer as they would.
			return exchange.decideHandler(request, handler, response) ? null : new ModelAndView();
		}
		catch (IOException failure) {
			ex.addSuppressed(failure);
			return null;
		}
	}

	@Override
	public int getOrder() {
		return Ordered.HIGHEST_PRECEDENCE;
	}
}
