package io.github.ratelimit.web.key;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;
import org.springframework.http.server.PathContainer;

import io.github.ratelimit.web.RateLimitRequest;

/**
 * A request as the limiter reads it while it decides, the same on every web stack: what path rules match,
 * and what keys, plans, exemptions and resolver beans read. A web stack says how to read its request (the
 * abstract methods); this class says what the limiter makes of it, once for all stacks:
 * <ul>
 * <li><b>Parameters</b> are read once, before any key ({@link #unreadableParameters}): parameters that cannot
 * be decoded refuse every reader, and a reader that catches the failure still fails ({@link #guarded}), so a
 * client cannot choose to be keyed by its IP.</li>
 * <li><b>A {@code param:} key</b> is the one account every value names ({@link #parameterIdentity}).</li>
 * <li><b>A {@code header:} key</b> refuses a header sent on more than one line ({@link #header(String, String)}).</li>
 * <li><b>Shadow policies</b> that fell back for the request are noted on it, to be counted once it is
 * decided ({@link #fellBack}).</li>
 * </ul>
 * One per request decision; used by one thread at a time.
 */
public abstract class LimitedRequest implements RateLimitRequest {

	private @Nullable List<String> fallbacks;

	/** Whether parameters that cannot be decoded were asked for since the last {@link #guarded} began. */
	private boolean unreadableRead;

	/** Nothing to wait for: what {@link RequestValue#fetch} answers for a value read at once. */
	static final CompletableFuture<?> FETCHED = CompletableFuture.completedFuture(null);

	/** The answers of asynchronous resolvers, by bean name, once asked ({@link #fetched}). */
	private @Nullable Map<String, CompletableFuture<@Nullable String>> fetched;

	/**
	 * Returns the path within the application (without the context path), as path rules match it.
	 * @return the path
	 */
	public abstract PathContainer pathWithinApplication();

	/**
	 * Reads the request's parameters (of the query string and of a form body), once per request.
	 * @return why they cannot be read (no client input), or {@code null} when they can
	 */
	public abstract @Nullable String unreadableParameters();

	/**
	 * Returns the values of a parameter, once {@link #unreadableParameters} said they can be read.
	 * @param name the parameter
	 * @return its values; empty when it has none
	 */
	protected abstract List<String> parameterValues(String name);

	/**
	 * Returns whether a multipart request sends a parameter as a file part (no parameter to the server, a
	 * value to the handler).
	 * @param name the parameter
	 * @param origin the setting that reads it, for the failure
	 * @return {@code true} when it does
	 * @throws UnreadableRequestException when the parts cannot be read
	 */
	protected boolean isFilePart(String name, String origin) {
		return false;
	}

	/**
	 * Returns the request's content type.
	 * @return the header's value, or {@code null} when it has none
	 */
	protected abstract @Nullable String contentType();

	/**
	 * Returns the URI template variables of the handler that serves the request.
	 * @return the variables; empty when there are none, or no handler is known yet
	 */
	public abstract Map<String, String> pathVariables();

	/**
	 * Returns the client's full address (not cut to a network), as exemptions compare it.
	 * @return the address, or {@code null} when the connection's peer is no IP address
	 */
	public abstract @Nullable InetAddress clientAddress();

	/**
	 * Returns the client's IPv4 address as 32 bits when it is told without parsing.
	 * @return the bits, or {@code -1} when {@link #clientAddress} must tell
	 */
	public long clientIpv4Bits() {
		return -1;
	}

	/**
	 * Returns what a SpEL expression's {@code request} is: the web stack's own request, whose parameters
	 * refuse to be read when they cannot be decoded.
	 * @return the request
	 */
	public abstract Object nativeRequest();

	/**
	 * Returns an attribute of the request (a servlet request's, a WebFlux exchange's).
	 * @param name its name
	 * @return its value, or {@code null}
	 */
	public abstract @Nullable Object attribute(String name);

	@Override
	public String path() {
		return pathWithinApplication().value();
	}

	@Override
	public @Nullable String parameter(String name) {
		return parameter(name, "parameter('" + name + "')");
	}

	/**
	 * Returns a parameter's first value as Spring's {@code @RequestParam} finds it: from {@code name}, or from
	 * {@code name[]} when there is no {@code name}.
	 * @param name the parameter
	 * @param origin the setting that reads it, for the failure
	 * @return the value, or {@code null} when the request has none
	 * @throws UnreadableRequestException when the parameters cannot be decoded, or the name is a file part
	 */
	public @Nullable String parameter(String name, String origin) {
		List<String> values = values(name, origin);
		return values.isEmpty() ? null : values.get(0);
	}

	/**
	 * Returns the account a parameter names however an application reads it (its first value, Spring's
	 * values joined by commas, a list of them, the last one): every value, and every part of a value between
	 * commas, must name the same {@link KeyValues#identity}, blank ones aside.
	 * @param name the parameter
	 * @param origin the setting that reads it, for the failure
	 * @return the identity; {@code null} when the parameter is absent or blank
	 * @throws UnreadableRequestException when its values name different accounts, or cannot be read
	 */
	public @Nullable String parameterIdentity(String name, String origin) {
		String found = null;
		for (String value : values(name, origin)) {
			for (String part : value.split(",", -1)) {
				String identity = KeyValues.identity(part);
				if (identity.isEmpty() || identity.equals(found)) {
					continue;
				}
				if (found != null) {
					throw new UnreadableRequestException(origin,
							"parameter '" + name + "' names more than one account (repeated, or with a comma)", null);
				}
				found = identity;
			}
		}
		return found;
	}

	private List<String> values(String name, String origin) {
		String reason = unreadableParameters();
		if (reason != null) {
			this.unreadableRead = true;
			throw new UnreadableRequestException(origin, reason, null);
		}
		if (isMultipart() && isFilePart(name, origin)) {
			throw new UnreadableRequestException(origin, "parameter '" + name + "' is sent as a file part", null);
		}
		List<String> values = parameterValues(name);
		return values.isEmpty() ? parameterValues(name + "[]") : values;
	}

	/**
	 * Notes that a reader asked for parameters that cannot be decoded through the web stack's own request
	 * ({@link #nativeRequest}, {@link #unwrap}).
	 * @param origin the setting that reads them
	 * @return the failure to throw
	 */
	protected final UnreadableRequestException unreadableParametersRead(String origin) {
		this.unreadableRead = true;
		return new UnreadableRequestException(origin, String.valueOf(unreadableParameters()), null);
	}

	/**
	 * Evaluates a reader of the request that is not the limiter's own (a SpEL expression, a resolver bean):
	 * when the parameters cannot be decoded and it asked for them, it fails, even when it caught the failure.
	 * @param origin the setting evaluated
	 * @param reader the reader
	 * @param <T> what it reads
	 * @return what it read
	 * @throws UnreadableRequestException when it asked for parameters that cannot be decoded
	 */
	public <T> T guarded(String origin, Function<LimitedRequest, T> reader) {
		this.unreadableRead = false;
		T value = reader.apply(this);
		if (this.unreadableRead) {
			this.unreadableRead = false;
			throw new UnreadableRequestException(origin, String.valueOf(unreadableParameters()), null);
		}
		return value;
	}

	/**
	 * Returns the answer of an asynchronous resolver for this request, asking it once.
	 * @param name the resolver's bean name
	 * @param resolve asks it
	 * @return its answer to come, or its failure
	 */
	public synchronized CompletableFuture<@Nullable String> fetched(String name,
			Function<LimitedRequest, CompletionStage<@Nullable String>> resolve) {
		if (this.fetched == null) {
			this.fetched = new HashMap<>(4);
		}
		return this.fetched.computeIfAbsent(name, (bean) -> {
			try {
				return resolve.apply(this).toCompletableFuture();
			}
			catch (RuntimeException ex) {
				return CompletableFuture.failedFuture(ex);
			}
		});
	}

	/**
	 * Returns whether the request's body holds no parameters: it has one of another type than a form's
	 * ({@code application/json}, ...), so a {@code param:} key meant for its fields finds none.
	 * @return {@code true} when its content type is neither a form nor multipart
	 */
	boolean bodyHoldsNoParameters() {
		String type = contentType();
		if (type == null || type.isBlank()) {
			return false;
		}
		String lower = type.trim().toLowerCase(Locale.ROOT);
		return !lower.startsWith("application/x-www-form-urlencoded") && !lower.startsWith("multipart/form-data");
	}

	/** The content type, printable and short, for a log line. */
	String printableContentType() {
		String type = String.valueOf(contentType()).replaceAll("[^\\x20-\\x7E]", "?");
		return (type.length() <= 60) ? type : type.substring(0, 60) + "...";
	}

	private boolean isMultipart() {
		String type = contentType();
		return type != null && type.regionMatches(true, 0, "multipart/form-data", 0, 19);
	}

	/**
	 * Returns a header's value as a key reads it.
	 * @param name the header
	 * @param origin the setting that reads it, for the failure
	 * @return the value, or {@code null} when the request has none
	 * @throws UnreadableRequestException when the header is sent on more than one line: the key would take
	 * the first, {@code @RequestHeader} all of them joined, so the two would not agree
	 */
	public @Nullable String header(String name, String origin) {
		List<String> values = headers(name);
		if (values.size() > 1) {
			throw new UnreadableRequestException(origin, "header '" + name + "' is sent more than once", null);
		}
		return values.isEmpty() ? null : values.get(0);
	}

	/**
	 * Returns the authenticated user's name.
	 * @return the name, or {@code null} when anonymous
	 */
	public @Nullable String userName() {
		java.security.Principal principal = principal();
		return (principal != null) ? principal.getName() : null;
	}

	/**
	 * A CORS preflight as browsers send it, which spends no budget: never with credentials. An
	 * {@code OPTIONS} request that carries an {@code Authorization} or {@code Cookie} header is someone
	 * else's (an authentication filter would check those credentials), and is limited as any request.
	 * @return {@code true} for a browser's preflight
	 */
	public boolean isBrowsersPreflight() {
		return "OPTIONS".equals(method()) && header(HttpHeaders.ORIGIN) != null
				&& header(HttpHeaders.ACCESS_CONTROL_REQUEST_METHOD) != null && header(HttpHeaders.AUTHORIZATION) == null
				&& header(HttpHeaders.COOKIE) == null;
	}

	/**
	 * Notes that a shadow policy fell back for this request (it is not refused), to be counted once the
	 * request is decided.
	 * @param policy the shadow policy's name
	 */
	public void fellBack(String policy) {
		if (this.fallbacks == null) {
			this.fallbacks = new ArrayList<>(1);
		}
		if (!this.fallbacks.contains(policy)) {
			this.fallbacks.add(policy);
		}
	}

	/**
	 * Takes the shadow policies that fell back for this request since the last call.
	 * @return their names, usually none
	 */
	public List<String> takeFallbacks() {
		List<String> fallbacks = this.fallbacks;
		this.fallbacks = null;
		return (fallbacks != null) ? fallbacks : List.of();
	}
}
