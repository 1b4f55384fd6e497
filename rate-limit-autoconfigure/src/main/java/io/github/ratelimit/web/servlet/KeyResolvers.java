package io.github.ratelimit.web.servlet;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.Principal;
import java.text.Normalizer;
import java.util.Base64;
import java.util.Collections;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

import jakarta.servlet.http.HttpServletRequest;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.BeansException;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.ParserContext;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.expression.spel.support.SimpleEvaluationContext;
import org.springframework.web.servlet.HandlerMapping;

import io.github.ratelimit.core.RateLimitConfigurationException;
import io.github.ratelimit.web.KeyResolver;

/**
 * Turns a policy's {@code key} setting into a {@link KeyResolver} whose keys are complete: typed
 * ({@code ip:}, {@code user:}, {@code header:}, ...) so that values of different sources never collide,
 * never empty (a missing source falls back to the client IP), and bounded (a value longer than
 * {@value #MAX_RAW_LENGTH} characters is replaced by its SHA-256, so a client cannot make the store
 * hold large keys). Hashed values have a namespace of their own: a value that itself starts with
 * {@code sha256:} is always hashed, so no raw value can equal the hashed form of another. A resolver
 * that throws also falls back to the client IP: bad client input never turns into a 500. Thread-safe.
 *
 * <p>A {@code param:} key is the parameter's first value up to its first comma. Spring MVC binds a
 * repeated parameter ({@code u=x&u=y}) to a {@code String} as {@code "x,y"}, while
 * {@code getParameter} (and so Spring Security's form login) reads {@code "x"}: cutting at the comma
 * gives {@code u=x}, {@code u=x,y} and {@code u=x&u=y} one budget, so whichever of the two a handler
 * reads, a client cannot reach the same identity with a second budget by repeating the parameter.
 * Nor by writing it as {@code u[]=x}, which Spring MVC binds to {@code u} when there is no {@code u}.
 * Nor by writing the name another way the application takes as the same account: the value is an
 * {@link #identity} (invisible characters dropped, trimmed, NFKC, case folded), so {@code Alice},
 * {@code alice }, alice with a soft hyphen inside and full-width {@code ａｌｉｃｅ} are one budget;
 * {@code #{param('u')}} keys by the exact value.
 */
final class KeyResolvers {

	static final int MAX_RAW_LENGTH = 64;

	/** The namespace of hashed values. */
	static final String HASHED = "sha256:";

	/** Base64url without padding of 32 bytes. */
	private static final int HASHED_DIGEST_LENGTH = 43;

	/** The types whose values {@link #typed} bounds. */
	private static final Set<String> TYPED = Set.of("user", "header", "param", "expr", "bean");

	private static final long WARNING_INTERVAL_NANOS = 60_000_000_000L;

	private static final Log logger = LogFactory.getLog(KeyResolvers.class);

	private static final String SUPPORTED = "Use ip, user, header:<Name>, param:<name>, global, a SpEL template #{...} or @beanName";

	private final ClientIpResolver clientIpResolver;

	private final @Nullable BeanFactory beanFactory;

	private final SpelExpressionParser parser = new SpelExpressionParser();

	/**
	 * Creates the factory.
	 * @param clientIpResolver finds the client IP, for {@code ip} keys and fallbacks
	 * @param beanFactory looks up {@code @beanName} resolvers; {@code null} refuses them
	 */
	public KeyResolvers(ClientIpResolver clientIpResolver, @Nullable BeanFactory beanFactory) {
		this.clientIpResolver = clientIpResolver;
		this.beanFactory = beanFactory;
	}

	/**
	 * Builds the resolver of a key setting.
	 * @param spec the setting, e.g. {@code ip} or {@code header:X-Api-Key}
	 * @param origin where the setting comes from, for error messages
	 * @return a resolver whose result is never {@code null}
	 * @throws RateLimitConfigurationException when the setting cannot work
	 */
	public KeyResolver forSpec(String spec, String origin) {
		String trimmed = spec.trim();
		if (trimmed.isEmpty() || trimmed.equals("ip")) {
			return (request) -> "ip:" + this.clientIpResolver.resolve(request);
		}
		if (trimmed.equals("global")) {
			return (request) -> "global";
		}
		if (trimmed.equals("user")) {
			return typed("user", KeyResolvers::userName, origin);
		}
		if (trimmed.startsWith("header:")) {
			String name = argument(trimmed, "header:", origin);
			return typed("header", (request) -> request.getHeader(name), origin);
		}
		if (trimmed.startsWith("param:")) {
			String name = argument(trimmed, "param:", origin);
			return typed("param", (request) -> parameterIdentity(request, name), origin);
		}
		if (trimmed.contains("#{")) {
			return typed("expr", expression(trimmed, origin), origin);
		}
		if (trimmed.startsWith("@")) {
			return typed("bean", bean(argument(trimmed, "@", origin), origin), origin);
		}
		throw new RateLimitConfigurationException(origin, "unknown key '" + spec + "'", SUPPORTED);
	}

	/**
	 * Builds the resolver of a plan setting: the same syntax as keys ({@code header:<Name>},
	 * {@code param:<name>}, a SpEL template {@code #{...}}, {@code @beanName}), but the value is the plan
	 * name itself, with no type and no fallback ({@code null} when the request names none).
	 * @param spec the setting, e.g. {@code @planOfApiKey}
	 * @param origin where the setting comes from, for error messages
	 * @return a resolver of the raw plan name
	 * @throws RateLimitConfigurationException when the setting cannot work
	 */
	KeyResolver forPlanSpec(String spec, String origin) {
		String trimmed = spec.trim();
		if (trimmed.startsWith("header:")) {
			String name = argument(trimmed, "header:", origin);
			return (request) -> request.getHeader(name);
		}
		if (trimmed.startsWith("param:")) {
			String name = argument(trimmed, "param:", origin);
			return (request) -> parameter(request, name);
		}
		if (trimmed.contains("#{")) {
			return expression(trimmed, origin);
		}
		if (trimmed.startsWith("@")) {
			return bean(argument(trimmed, "@", origin), origin);
		}
		throw new RateLimitConfigurationException(origin, "unknown plan source '" + spec + "'",
				"Use header:<Name>, param:<name>, a SpEL template #{...} or @beanName (a KeyResolver returning the "
						+ "plan name; the way to trust the plan, e.g. looked up from an API key)");
	}

	/**
	 * Builds a condition over a request: a SpEL boolean over the root of key expressions
	 * ({@code ip}, {@code user}, {@code request}, {@code header('Name')}, {@code param('name')},
	 * {@code pathVariables}), evaluated with the same read-only context. An expression that throws, or
	 * is not {@code true}, does not hold.
	 * @param condition the expression, e.g. {@code header('X-Internal') == 'yes'}
	 * @param origin where it comes from, for error messages
	 * @return the condition
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
				KeyExpressionRoot root = new KeyExpressionRoot(request, this.clientIpResolver);
				SimpleEvaluationContext context = SimpleEvaluationContext.forReadOnlyDataBinding()
					.withInstanceMethods()
					.withRootObject(root)
					.build();
				return Boolean.TRUE.equals(expression.getValue(context));
			}
			catch (RuntimeException ex) {
				// Fail closed: a condition that cannot be evaluated exempts nobody.
				logger.debug("Exemption condition failed; the request is not exempt", ex);
				return false;
			}
		};
	}

	private KeyResolver typed(String type, KeyResolver source, String origin) {
		String prefix = type + ":";
		// A key that fails is keyed by IP instead (a lockout per username becomes one per IP): said at WARN,
		// at most once a minute per key setting, since clients can make it fail on every request.
		AtomicLong lastWarning = new AtomicLong(System.nanoTime() - WARNING_INTERVAL_NANOS);
		return (request) -> {
			String value;
			try {
				value = source.resolve(request);
			}
			catch (RuntimeException ex) {
				long now = System.nanoTime();
				long last = lastWarning.get();
				if (now - last >= WARNING_INTERVAL_NANOS && lastWarning.compareAndSet(last, now)) {
					// The exception's message may hold client input: no line breaks, and not all of it.
					String failure = String.valueOf(ex).replaceAll("\\p{Cntrl}", "?");
					logger.warn("The key of " + origin + " failed ("
							+ ((failure.length() <= 200) ? failure : failure.substring(0, 200) + "...")
							+ "); the request is keyed by its client IP instead (said at most once a minute; the stack "
							+ "trace at DEBUG)");
				}
				logger.debug("Key resolution of " + origin + " failed; falling back to the client IP", ex);
				value = null;
			}
			if (value == null || value.isBlank()) {
				return "ip:" + this.clientIpResolver.resolve(request);
			}
			return prefix + bounded(value);
		};
	}

	private KeyResolver expression(String template, String origin) {
		Expression expression;
		try {
			expression = this.parser.parseExpression(template, ParserContext.TEMPLATE_EXPRESSION);
		}
		catch (ParseException ex) {
			throw new RateLimitConfigurationException(origin,
					"cannot parse the SpEL key '" + template + "': " + ex.getSimpleMessage(),
					"Fix the expression; it may use request, ip, user, pathVariables['name'], header('Name') and param('name')");
		}
		return (request) -> {
			KeyExpressionRoot root = new KeyExpressionRoot(request, this.clientIpResolver);
			SimpleEvaluationContext context = SimpleEvaluationContext.forReadOnlyDataBinding()
				.withInstanceMethods()
				.withRootObject(root)
				.build();
			return expression.getValue(context, String.class);
		};
	}

	private KeyResolver bean(String name, String origin) {
		if (this.beanFactory == null) {
			throw new RateLimitConfigurationException(origin, "key '@" + name + "' needs a bean factory",
					"Use a built-in key");
		}
		BeanFactory beans = this.beanFactory;
		try {
			if (!beans.isTypeMatch(name, KeyResolver.class)) {
				throw new RateLimitConfigurationException(origin,
						"bean '" + name + "' is not a " + KeyResolver.class.getName(),
						"Make the bean implement " + KeyResolver.class.getName());
			}
		}
		catch (BeansException ex) {
			throw new RateLimitConfigurationException(origin, "no bean named '" + name + "'",
					"Declare a " + KeyResolver.class.getSimpleName() + " bean named '" + name + "'");
		}
		// Looked up on first use: the bean may depend on beans created after the filter.
		return (request) -> beans.getBean(name, KeyResolver.class).resolve(request);
	}

	private static String argument(String spec, String prefix, String origin) {
		String argument = spec.substring(prefix.length()).trim();
		if (argument.isEmpty()) {
			throw new RateLimitConfigurationException(origin, "key '" + spec + "' names nothing after '" + prefix + "'",
					"Write e.g. " + prefix + switch (prefix) {
						case "@" -> "myKeyResolver";
						case "param:" -> "username";
						default -> "X-Api-Key";
					});
		}
		if (prefix.equals("header:") && !ClientIpResolver.isToken(argument)) {
			// No request carries such a header: every request would fall back to its IP.
			throw new RateLimitConfigurationException(origin, "'" + argument + "' is not an HTTP header name",
					"Write the header's name as requests carry it, e.g. header:X-Api-Key");
		}
		return argument;
	}

	static @Nullable String userName(HttpServletRequest request) {
		Principal principal = request.getUserPrincipal();
		return (principal != null) ? principal.getName() : null;
	}

	/**
	 * Returns the part of a parameter that every way of reading it agrees on: the first value up to its
	 * first comma ({@code getParameter} reads the first value, Spring MVC's binding the values joined
	 * by commas), as an {@link #identity}.
	 */
	static @Nullable String parameterIdentity(HttpServletRequest request, String name) {
		String first = parameter(request, name);
		return (first != null) ? parameterIdentity(first) : null;
	}

	private static String parameterIdentity(String first) {
		int comma = first.indexOf(',');
		return identity((comma >= 0) ? first.substring(0, comma) : first);
	}

	/**
	 * Returns the account a name stands for however an application compares names: without the
	 * characters that do not show (Unicode's default ignorables: the soft hyphen, zero-width spaces and
	 * joiners, variation selectors; an LDAP directory maps them to nothing, RFC 4518), without surrounding
	 * whitespace (Spring Security's form login trims), in Unicode's compatibility form (NFKC: full-width
	 * {@code ａｌｉｃｅ} is {@code alice}) and with case folded as {@link String#equalsIgnoreCase} folds it
	 * (a case-insensitive user store, an LDAP directory; so the dotless {@code ı} and the dotted {@code İ}
	 * are {@code i}, and {@code ς} is {@code σ}), so no variant of one name is a budget of its own.
	 */
	static String identity(String name) {
		String visible = withoutIgnorables(name);
		int start = 0;
		int end = visible.length();
		while (start < end && isSpace(visible.charAt(start))) {
			start++;
		}
		while (end > start && isSpace(visible.charAt(end - 1))) {
			end--;
		}
		String stripped = visible.substring(start, end);
		String compatible = Normalizer.isNormalized(stripped, Normalizer.Form.NFKC) ? stripped
				: Normalizer.normalize(stripped, Normalizer.Form.NFKC).strip();
		return foldCase(compatible);
	}

	/** The name without default ignorable code points (the usual name has none: then the name itself). */
	private static String withoutIgnorables(String name) {
		StringBuilder visible = null;
		for (int i = 0; i < name.length();) {
			int cp = name.codePointAt(i);
			if (isIgnorable(cp)) {
				if (visible == null) {
					visible = new StringBuilder(name.length()).append(name, 0, i);
				}
			}
			else if (visible != null) {
				visible.appendCodePoint(cp);
			}
			i += Character.charCount(cp);
		}
		return (visible != null) ? visible.toString() : name;
	}

	/**
	 * Unicode's default ignorables, near enough: the format characters (the soft hyphen, zero-width space,
	 * joiners, word joiner, byte order mark, bidi controls, tags), the combining grapheme joiner, the
	 * Mongolian free variation selectors, the Hangul fillers and the variation selectors.
	 */
	private static boolean isIgnorable(int cp) {
		return Character.getType(cp) == Character.FORMAT || cp == 0x034F || (cp >= 0x115F && cp <= 0x1160)
				|| (cp >= 0x17B4 && cp <= 0x17B5) || (cp >= 0x180B && cp <= 0x180F) || cp == 0x3164
				|| (cp >= 0xFE00 && cp <= 0xFE0F) || cp == 0xFFA0 || (cp >= 0xE0100 && cp <= 0xE01EF);
	}

	/** Each code point as {@link String#equalsIgnoreCase} compares it: upper-cased, then lower-cased. */
	private static String foldCase(String name) {
		StringBuilder folded = null;
		for (int i = 0; i < name.length();) {
			int cp = name.codePointAt(i);
			int fold = Character.toLowerCase(Character.toUpperCase(cp));
			if (folded == null && fold != cp) {
				folded = new StringBuilder(name.length()).append(name, 0, i);
			}
			if (folded != null) {
				folded.appendCodePoint(fold);
			}
			i += Character.charCount(cp);
		}
		return (folded != null) ? folded.toString() : name;
	}

	/** {@link String#trim}'s and {@link String#strip}'s spaces and controls, and no-break spaces. */
	private static boolean isSpace(char c) {
		return c <= ' ' || Character.isWhitespace(c) || Character.isSpaceChar(c);
	}

	/**
	 * Returns a parameter's first value as Spring MVC's {@code @RequestParam} finds it: from
	 * {@code name}, or from {@code name[]} when there is no {@code name} (so {@code username[]=alice}
	 * is alice to the handler, and must be to the limiter).
	 */
	static @Nullable String parameter(HttpServletRequest request, String name) {
		String value = request.getParameter(name);
		return (value != null) ? value : request.getParameter(name + "[]");
	}

	/**
	 * Returns a key an operator wrote (for the actuator) as the limiter holds it: an {@code ip:} key's
	 * address as {@link ClientIpResolver#network} keys it, and a typed value ({@code user:},
	 * {@code header:}, {@code param:}, {@code expr:}, {@code bean:}) longer than {@value #MAX_RAW_LENGTH}
	 * characters as its SHA-256 and a {@code param:} value as {@link #parameterIdentity} reads it, as a
	 * request's value would be. A value in the hashed form (as the
	 * limiter logs it) and any other key are taken as they are.
	 * @param key the key as written
	 * @return the key the store holds for it
	 */
	String canonical(String key) {
		if (key.startsWith("ip:")) {
			return "ip:" + this.clientIpResolver.network(key.substring(3));
		}
		int colon = key.indexOf(':');
		if (colon < 0 || !TYPED.contains(key.substring(0, colon))) {
			return key;
		}
		String value = key.substring(colon + 1);
		if (isHashedForm(value)) {
			return key;
		}
		return key.substring(0, colon + 1) + bounded(key.startsWith("param:") ? parameterIdentity(value) : value);
	}

	/** Whether a value is {@code sha256:} and a digest as {@link #bounded} writes it. */
	private static boolean isHashedForm(String value) {
		if (value.length() != HASHED.length() + HASHED_DIGEST_LENGTH || !value.startsWith(HASHED)) {
			return false;
		}
		for (int i = HASHED.length(); i < value.length(); i++) {
			char c = value.charAt(i);
			if (!(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_')) {
				return false;
			}
		}
		return true;
	}

	static String bounded(String value) {
		if (value.length() <= MAX_RAW_LENGTH && !value.startsWith(HASHED)) {
			return value;
		}
		try {
			byte[] digest = MessageDigest.getInstance("SHA-256").digest(value.getBytes(StandardCharsets.UTF_8));
			return HASHED + Base64.getUrlEncoder().withoutPadding().encodeToString(digest);
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-256 is missing from this JVM", ex);
		}
	}

	/**
	 * What a SpEL key expression can read: {@code request}, {@code ip}, {@code user},
	 * {@code pathVariables['name']}, {@code header('Name')} and {@code param('name')}.
	 */
	public static final class KeyExpressionRoot {

		private final HttpServletRequest request;

		private final ClientIpResolver clientIpResolver;

		KeyExpressionRoot(HttpServletRequest request, ClientIpResolver clientIpResolver) {
			this.request = request;
			this.clientIpResolver = clientIpResolver;
		}

		/**
		 * Returns the request.
		 * @return the request
		 */
		public HttpServletRequest getRequest() {
			return this.request;
		}

		/**
		 * Returns the client IP, resolved as for {@code ip} keys: an IPv6 client's network
		 * ({@code 2001:db8:7:8::/64}) under the default {@code ipv6-prefix}.
		 * @return the client IP
		 */
		public String getIp() {
			return this.clientIpResolver.resolve(this.request);
		}

		/**
		 * Returns the authenticated principal's name.
		 * @return the name, or {@code null} when anonymous
		 */
		public @Nullable String getUser() {
			return userName(this.request);
		}

		/**
		 * Returns the path variables of the matched handler.
		 * @return the variables, empty when there are none
		 */
		@SuppressWarnings("unchecked")
		public Map<String, String> getPathVariables() {
			Object variables = this.request.getAttribute(HandlerMapping.URI_TEMPLATE_VARIABLES_ATTRIBUTE);
			return (variables instanceof Map<?, ?> map) ? (Map<String, String>) map : Collections.emptyMap();
		}

		/**
		 * Returns a request header.
		 * @param name the header name
		 * @return its first value, or {@code null}
		 */
		public @Nullable String header(String name) {
			return this.request.getHeader(name);
		}

		/**
		 * Returns a request parameter, as {@code @RequestParam} finds it ({@code name}, else {@code name[]}).
		 * @param name the parameter name
		 * @return its first value, or {@code null}
		 */
		public @Nullable String param(String name) {
			return parameter(this.request, name);
		}

	}
}
