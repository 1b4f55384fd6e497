package io.github.ratelimit.web.key;

import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.expression.EvaluationContext;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.ParserContext;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.expression.spel.support.SimpleEvaluationContext;

import io.github.ratelimit.core.RateLimitConfigurationException;

/**
 * SpEL over a request, for keys and plans ({@code #{...}} templates) and conditions ({@code exempt-when}):
 * evaluated with a read-only context over a {@link Root} of what an expression may read, the request's
 * parameters guarded ({@link LimitedRequest#guarded}). An expression that throws cannot tell, and
 * refuses the request. Thread-safe.
 */
final class KeyExpressions {

	private final SpelExpressionParser parser = new SpelExpressionParser();

	private final KeyResolvers keyResolvers;

	KeyExpressions(KeyResolvers keyResolvers) {
		this.keyResolvers = keyResolvers;
	}

	/**
	 * Builds a condition over a request: a SpEL boolean over the root of key expressions
	 * ({@code ip}, {@code user}, {@code request}, {@code header('Name')}, {@code param('name')},
	 * {@code pathVariables}), evaluated with the same read-only context. An expression that is not
	 * {@code true} (a {@code null} included) does not hold; one that throws cannot tell, and refuses the
	 * request ({@link UnreadableRequestException}), as a key or a plan that throws does: only an absent
	 * value has a meaning, and a client decides what makes an expression throw.
	 * @param condition the expression, e.g. {@code header('X-Internal') == 'yes'}
	 * @param origin where it comes from, for error messages
	 * @return the condition, which throws {@link UnreadableRequestException} when it cannot be evaluated
	 * @throws RateLimitConfigurationException when the expression does not parse
	 */
	RequestCondition condition(String condition, String origin) {
		String trimmed = condition.trim();
		if (trimmed.startsWith("#{") && trimmed.endsWith("}")) {
			trimmed = trimmed.substring(2, trimmed.length() - 1);
		}
		if (trimmed.isEmpty()) {
			throw new RateLimitConfigurationException(origin, "the condition is empty",
					"Write a SpEL boolean such as header('X-Internal') == 'yes', or remove the property");
		}
		Expression expression;
		try {
			expression = this.parser.parseExpression(trimmed);
		}
		catch (ParseException | IllegalArgumentException ex) {
			String reason = (ex instanceof ParseException parse) ? parse.getSimpleMessage() : ex.getMessage();
			throw new RateLimitConfigurationException(origin,
					"cannot parse the SpEL condition '" + condition + "': " + reason,
					"Fix the expression; it may use request, ip, user, pathVariables['name'], header('Name') and param('name')");
		}
		return (request) -> {
			try {
				return request.guarded(origin, (guarded) -> Boolean.TRUE.equals(expression.getValue(context(guarded))));
			}
			catch (RuntimeException ex) {
				throw this.keyResolvers.unreadable(ex, origin, "its exemption condition failed");
			}
		};
	}

	RequestValue template(String template, String origin) {
		Expression expression;
		try {
			expression = this.parser.parseExpression(template, ParserContext.TEMPLATE_EXPRESSION);
		}
		catch (ParseException ex) {
			throw new RateLimitConfigurationException(origin,
					"cannot parse the SpEL key '" + template + "': " + ex.getSimpleMessage(),
					"Fix the expression; it may use request, ip, user, pathVariables['name'], header('Name') and param('name')");
		}
		return (request) -> request.guarded(origin, (guarded) -> expression.getValue(context(guarded), String.class));
	}

	/** What an expression may read of a request: its {@link Root}, read-only, with the root's methods. */
	private static EvaluationContext context(LimitedRequest request) {
		return SimpleEvaluationContext.forReadOnlyDataBinding()
			.withInstanceMethods()
			.withRootObject(new Root(request))
			.build();
	}

	/**
	 * What a SpEL key expression can read: {@code request}, {@code ip}, {@code user},
	 * {@code pathVariables['name']}, {@code header('Name')} and {@code param('name')}.
	 */
	public static final class Root {

		private final LimitedRequest request;

		Root(LimitedRequest request) {
			this.request = request;
		}

		/**
		 * Returns the web stack's own request: an {@code HttpServletRequest} on Spring MVC.
		 * @return the request
		 */
		public Object getRequest() {
			return this.request.nativeRequest();
		}

		/**
		 * Returns the client IP, resolved as for {@code ip} keys: an IPv6 client's network
		 * ({@code 2001:db8:7:8::/64}) under the default {@code ipv6-prefix}.
		 * @return the client IP
		 */
		public String getIp() {
			return this.request.clientIp();
		}

		/**
		 * Returns the authenticated principal's name.
		 * @return the name, or {@code null} when anonymous
		 */
		public @Nullable String getUser() {
			return this.request.userName();
		}

		/**
		 * Returns the path variables of the matched handler.
		 * @return the variables, empty when there are none
		 */
		public Map<String, String> getPathVariables() {
			return this.request.pathVariables();
		}

		/**
		 * Returns a request header.
		 * @param name the header name
		 * @return its value, or {@code null}
		 * @throws UnreadableRequestException when it is sent more than once
		 */
		public @Nullable String header(String name) {
			return this.request.header(name, "header('" + name + "')");
		}

		/**
		 * Returns a request parameter, as {@code @RequestParam} finds it ({@code name}, else {@code name[]}).
		 * @param name the parameter name
		 * @return its first value, or {@code null}
		 * @throws UnreadableRequestException when the parameters cannot be decoded, or the name is a file part
		 */
		public @Nullable String param(String name) {
			return this.request.parameter(name, "param('" + name + "')");
		}

	}
}
