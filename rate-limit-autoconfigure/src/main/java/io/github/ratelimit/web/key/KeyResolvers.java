package io.github.ratelimit.web.key;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.BeansException;
import org.springframework.beans.factory.BeanFactory;

import io.github.ratelimit.core.RateLimitClock;
import io.github.ratelimit.core.RateLimitConfigurationException;
import io.github.ratelimit.web.AsyncRequestKeyResolver;
import io.github.ratelimit.web.RequestKeyResolver;
import io.github.ratelimit.web.clientip.ClientIpResolver;

/**
 * Turns a policy's {@code key} setting into a {@link RequestValue} whose keys are complete: typed
 * ({@code ip:}, {@code user:}, {@code header:}, ...) so that values of different sources never collide,
 * never empty (a missing source falls back to the client IP), and bounded (a value longer than
 * {@value KeyValues#MAX_RAW_LENGTH} characters is replaced by its SHA-256, so a client cannot make the store
 * hold large keys). Hashed values have a namespace of their own: a value that itself starts with
 * {@code sha256:} is always hashed, so no raw value can equal the hashed form of another. Only a
 * {@code null} or blank value is absent and falls back to the client IP: a resolver that throws, or a
 * source the request cannot be read from (parameters that cannot be decoded, a key header sent twice, a
 * parameter sent as a file part), throws {@link UnreadableRequestException}, which refuses the request
 * with a {@code 400}: otherwise a client could choose to be keyed by its IP. Thread-safe.
 *
 * <p>A {@code param:} key is the account the parameter names, whichever way a handler reads it:
 * {@code getParameter} (Spring Security's form login) reads the first value, Spring MVC binds a repeated
 * parameter ({@code u=x&u=y}) to a {@code String} as {@code "x,y"} and to a list as its values, and an
 * application may take the last. So every value, and every part of a value between commas, must name
 * the same account (blank ones aside: {@code u=&u=alice} is alice); a request whose parts name two is
 * refused ({@code 400}), never keyed by one of them while the handler reads another.
 * Nor by writing it as {@code u[]=x}, which Spring MVC binds to {@code u} when there is no {@code u}.
 * Nor by writing the name another way the application takes as the same account: the value is an
 * {@link KeyValues#identity} (invisible characters dropped, trimmed, NFKC, case folded), so {@code Alice},
 * {@code alice }, alice with a soft hyphen inside and full-width {@code ａｌｉｃｅ} are one budget;
 * {@code #{param('u')}} keys by the exact value. A {@code header:} key's value is read the same way
 * (first value up to its first comma, as an identity): {@code @RequestHeader} joins repeated lines with
 * commas, and an application may trim or compare it without case; a header sent on more than one line
 * is refused.
 */
public final class KeyResolvers {

	/** The types whose values {@link #typed} bounds. */
	private static final Set<String> TYPED = Set.of("user", "header", "param", "expr", "bean");

	private static final Log logger = LogFactory.getLog(KeyResolvers.class);

	private static final String SUPPORTED = "Use ip, user, header:<Name>, param:<name>, global, a SpEL template #{...} or @beanName";

	private final ClientIpResolver clientIpResolver;

	private final @Nullable BeanFactory beanFactory;

	/** What clients can make fail on every request is said at WARN at most once a minute per setting. */
	private final ThrottledLog warnings = new ThrottledLog(RateLimitClock.SYSTEM, Duration.ofMinutes(1), 1000);

	private final KeyExpressions expressions;

	/**
	 * Creates the factory.
	 * @param clientIpResolver finds the client IP, for {@code ip} keys and fallbacks
	 * @param beanFactory looks up {@code @beanName} resolvers; {@code null} refuses them
	 */
	public KeyResolvers(ClientIpResolver clientIpResolver, @Nullable BeanFactory beanFactory) {
		this.clientIpResolver = clientIpResolver;
		this.beanFactory = beanFactory;
		this.expressions = new KeyExpressions(this);
	}

	/**
	 * Builds the resolver of a key setting.
	 * @param spec the setting, e.g. {@code ip} or {@code header:X-Api-Key}
	 * @param origin where the setting comes from, for error messages
	 * @return a resolver whose result is never {@code null}
	 * @throws RateLimitConfigurationException when the setting cannot work
	 */
	public RequestValue forSpec(String spec, String origin) {
		String trimmed = spec.trim();
		if (trimmed.isEmpty() || trimmed.equals("ip")) {
			return (request) -> "ip:" + request.clientIp();
		}
		if (trimmed.equals("global")) {
			return (request) -> "global";
		}
		if (trimmed.equals("user")) {
			return typed("user", LimitedRequest::userName, origin);
		}
		if (trimmed.startsWith("header:")) {
			String name = argument(trimmed, "header:", origin);
			return typed("header", (request) -> {
				String value = request.header(name, origin);
				return (value != null) ? KeyValues.firstValueIdentity(value) : null;
			}, origin);
		}
		if (trimmed.startsWith("param:")) {
			String name = argument(trimmed, "param:", origin);
			return typed("param", (request) -> {
				String identity = request.parameterIdentity(name, origin);
				if (identity == null && request.bodyHoldsNoParameters()) {
					warnOfABodyWithoutParameters(request, name, origin);
				}
				return identity;
			}, origin);
		}
		if (trimmed.contains("#{")) {
			return typed("expr", this.expressions.template(trimmed, origin), origin);
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
	public RequestValue forPlanSpec(String spec, String origin) {
		String trimmed = spec.trim();
		if (trimmed.startsWith("header:")) {
			String name = argument(trimmed, "header:", origin);
			return plan((request) -> request.header(name, origin), origin);
		}
		if (trimmed.startsWith("param:")) {
			String name = argument(trimmed, "param:", origin);
			return plan((request) -> request.parameter(name, origin), origin);
		}
		if (trimmed.contains("#{")) {
			return plan(this.expressions.template(trimmed, origin), origin);
		}
		if (trimmed.startsWith("@")) {
			return plan(bean(argument(trimmed, "@", origin), origin), origin);
		}
		throw new RateLimitConfigurationException(origin, "unknown plan source '" + spec + "'",
				"Use header:<Name>, param:<name>, a SpEL template #{...} or @beanName (a KeyResolver returning the "
						+ "plan name; the way to trust the plan, e.g. looked up from an API key)");
	}

	/**
	 * Returns whether a key, plan or condition setting may read the request's parameters: a
	 * {@code param:} source, a SpEL expression that calls {@code param} or reads {@code request}, a
	 * resolver bean (which gets the request). Such a setting's requests have their parameters read up
	 * front ({@link LimitedRequest#unreadableParameters}).
	 * @param spec the setting, {@code null} for none
	 * @return {@code true} when it may read them
	 */
	public static boolean readsParameters(@Nullable String spec) {
		if (spec == null) {
			return false;
		}
		String trimmed = spec.trim();
		if (trimmed.startsWith("param:") || trimmed.startsWith("@")) {
			return true;
		}
		if (trimmed.startsWith("header:") || trimmed.equals("ip") || trimmed.equals("user") || trimmed.equals("global")) {
			return false;
		}
		return trimmed.contains("param") || trimmed.contains("request");
	}

	/**
	 * Builds a condition over a request, such as an exemption ({@link KeyExpressions#condition}).
	 * @param condition the expression, e.g. {@code header('X-Internal') == 'yes'}
	 * @param origin where it comes from, for error messages
	 * @return the condition
	 * @throws RateLimitConfigurationException when the expression does not parse
	 */
	public RequestCondition condition(String condition, String origin) {
		return this.expressions.condition(condition, origin);
	}

	/**
	 * A plan resolver that cannot tell a request's plan refuses it: the policy's own limit instead would
	 * let a client that makes the lookup fail choose a plan.
	 */
	private RequestValue plan(RequestValue source, String origin) {
		return new RequestValue() {

			@Override
			public @Nullable String read(LimitedRequest request) {
				try {
					return source.read(request);
				}
				catch (RuntimeException ex) {
					throw unreadable(ex, origin, "its plan cannot be told");
				}
			}

			@Override
			public CompletableFuture<?> fetch(LimitedRequest request) {
				return source.fetch(request);
			}

		};
	}

	/**
	 * Turns what a key, plan or condition threw into the failure that refuses the request, said at WARN
	 * at most once a minute per setting, since clients can make it fail on every request.
	 */
	UnreadableRequestException unreadable(RuntimeException ex, String origin, String reason) {
		UnreadableRequestException failure = null;
		// SpEL wraps what a method it calls throws (request.getParameter of a request that cannot be decoded).
		for (Throwable cause = ex; cause != null && failure == null; cause = cause.getCause()) {
			if (cause instanceof UnreadableRequestException unreadable) {
				failure = unreadable.from(origin);
			}
		}
		if (failure == null) {
			failure = new UnreadableRequestException(origin, reason, ex);
		}
		if (this.warnings.tryLog(origin)) {
			Throwable cause = (failure.getCause() != null) ? failure.getCause() : failure;
			// The exception's message may hold client input: no line breaks, and not all of it.
			String what = String.valueOf(cause).replaceAll("\\p{Cntrl}", "?");
			logger.warn(origin + " cannot be told for a request: " + failure.reason() + " ("
					+ ((what.length() <= 200) ? what : what.substring(0, 200) + "...")
					+ "); it is refused with 400 (a shadow policy takes the value as absent instead; said at most "
					+ "once a minute, the stack trace at DEBUG)");
		}
		logger.debug(origin + " cannot be told for a request; it is refused", ex);
		return failure;
	}

	/**
	 * Says that a {@code param:} key meets requests whose body (JSON, ...) holds no parameters: such a
	 * key reads the query string and form bodies only, so those requests are keyed by their client IP.
	 */
	private void warnOfABodyWithoutParameters(LimitedRequest request, String name, String origin) {
		if (this.warnings.tryLog("body " + origin)) {
			logger.warn(origin + " reads parameter '" + name + "', which a request with a body of type "
					+ request.printableContentType()
					+ " does not carry: a param: key reads the query string and form-encoded or multipart bodies "
					+ "only, so such requests are keyed by their client IP (key a JSON body's field with a "
					+ "RequestKeyResolver bean; said at most once a minute)");
		}
	}

	private RequestValue typed(String type, RequestValue source, String origin) {
		String prefix = type + ":";
		return new RequestValue() {

			@Override
			public String read(LimitedRequest request) {
				String value;
				try {
					value = source.read(request);
				}
				catch (RuntimeException ex) {
					// Never keyed by IP instead: a client that makes its key fail would choose its budget (a lockout
					// per username would become one per IP). A shadow policy takes the IP key it carries.
					throw unreadable(ex, origin, "its key cannot be read").withFallbackKey("ip:" + request.clientIp());
				}
				if (value == null || value.isBlank()) {
					return "ip:" + request.clientIp();
				}
				return prefix + KeyValues.bounded(value);
			}

			@Override
			public CompletableFuture<?> fetch(LimitedRequest request) {
				return source.fetch(request);
			}

		};
	}

	private RequestValue bean(String name, String origin) {
		if (this.beanFactory == null) {
			throw new RateLimitConfigurationException(origin, "key '@" + name + "' needs a bean factory",
					"Use a built-in key");
		}
		BeanFactory beans = this.beanFactory;
		boolean async;
		try {
			async = beans.isTypeMatch(name, AsyncRequestKeyResolver.class);
			if (!async && !beans.isTypeMatch(name, RequestKeyResolver.class)) {
				throw new RateLimitConfigurationException(origin,
						"bean '" + name + "' is not a " + RequestKeyResolver.class.getName() + " nor an "
								+ AsyncRequestKeyResolver.class.getName(),
						"Make the bean implement " + RequestKeyResolver.class.getName() + " (or "
								+ AsyncRequestKeyResolver.class.getSimpleName() + " when it needs I/O)");
			}
		}
		catch (BeansException ex) {
			throw new RateLimitConfigurationException(origin, "no bean named '" + name + "'",
					"Declare a " + RequestKeyResolver.class.getSimpleName() + " bean named '" + name + "'");
		}
		if (async) {
			return asyncBean(name, origin, beans);
		}
		// Looked up on first use: the bean may depend on beans created after the filter.
		// The bean gets the request: its parameters are read first, and refuse to be read when broken.
		return (request) -> request.guarded(origin,
				(guarded) -> beans.getBean(name, RequestKeyResolver.class).resolve(guarded));
	}

	/**
	 * An asynchronous resolver's answer: asked once per request ({@link LimitedRequest#fetched}), by
	 * {@link RequestValue#fetch} before the limiter decides (WebFlux), else when read, on the request's thread,
	 * which then waits for it (Spring MVC).
	 */
	private static RequestValue asyncBean(String name, String origin, BeanFactory beans) {
		return new RequestValue() {

			@Override
			public @Nullable String read(LimitedRequest request) {
				try {
					return fetch(request).join();
				}
				catch (CompletionException ex) {
					throw (ex.getCause() instanceof RuntimeException cause) ? cause : ex;
				}
			}

			@Override
			public CompletableFuture<@Nullable String> fetch(LimitedRequest request) {
				// Parameters the bean reads as it is asked are guarded as for a resolver that answers at once.
				return request.fetched(name, (asked) -> asked.guarded(origin,
						(guarded) -> beans.getBean(name, AsyncRequestKeyResolver.class).resolve(guarded)));
			}

		};
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

	/**
	 * Returns a key an operator wrote (for the actuator) as the limiter holds it: an {@code ip:} key's
	 * address as {@link ClientIpResolver#network} keys it, and a typed value ({@code user:},
	 * {@code header:}, {@code param:}, {@code expr:}, {@code bean:}) longer than {@value KeyValues#MAX_RAW_LENGTH}
	 * characters as its SHA-256 and a {@code param:} or {@code header:} value as
	 * {@link KeyValues#firstValueIdentity} reads it, as a request's value would be. A value in the hashed form (as the
	 * limiter logs it) and any other key are taken as they are.
	 * @param key the key as written
	 * @return the key the store holds for it
	 */
	public String canonical(String key) {
		if (key.startsWith("ip:")) {
			return "ip:" + this.clientIpResolver.network(key.substring(3));
		}
		int colon = key.indexOf(':');
		if (colon < 0 || !TYPED.contains(key.substring(0, colon))) {
			return key;
		}
		String value = key.substring(colon + 1);
		if (KeyValues.isHashedForm(value)) {
			return key;
		}
		return key.substring(0, colon + 1)
				+ KeyValues.bounded((key.startsWith("param:") || key.startsWith("header:")) ? KeyValues.firstValueIdentity(value) : value);
	}
}
