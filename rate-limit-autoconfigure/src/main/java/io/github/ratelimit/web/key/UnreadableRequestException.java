package io.github.ratelimit.web.key;

import org.jspecify.annotations.Nullable;

/**
 * A request a policy cannot tell the key, plan or exemption of: its parameters cannot be decoded, a key
 * header is sent twice, a parameter comes as a file part, or a key expression, resolver bean, plan or
 * exemption threw on what the request holds. Thrown by the resolvers of {@link KeyResolvers} before any
 * store call, caught in one place, the {@code RateLimitExchange}, which answers {@code 400}: falling
 * back to the client IP instead would let a client choose its key (a lockout per username would become
 * one per IP). A shadow policy never lets it out: it falls back as it always did, and the request is
 * counted as {@code shadow-unreadable}. Carries no stack trace: clients cause it at will.
 */
public final class UnreadableRequestException extends RuntimeException {

	private final String origin;

	private final String reason;

	private final @Nullable String policy;

	private final @Nullable String fallbackKey;

	/**
	 * Creates the exception.
	 * @param origin the setting that cannot be told, e.g. {@code rate-limit.policies.login.key}
	 * @param reason why, safe to show to the client (no client input), e.g. {@code its parameters cannot be
	 * decoded}
	 * @param cause what the resolver threw, if anything
	 */
	public UnreadableRequestException(String origin, String reason, @Nullable Throwable cause) {
		this(origin, reason, cause, null, null);
	}

	private UnreadableRequestException(String origin, String reason, @Nullable Throwable cause,
			@Nullable String policy, @Nullable String fallbackKey) {
		super(origin + ": " + reason, cause, false, false);
		this.origin = origin;
		this.reason = reason;
		this.policy = policy;
		this.fallbackKey = fallbackKey;
	}

	/** The setting that cannot be told. */
	String origin() {
		return this.origin;
	}

	/** Why, without client input. */
	public String reason() {
		return this.reason;
	}

	/** The policy whose key, plan or exemption it is; {@code null} for {@code rate-limit.exempt.when}. */
	public @Nullable String policy() {
		return this.policy;
	}

	/** The key the request had before: its client IP ({@code ip:...}); only for a key, for shadow policies. */
	public @Nullable String fallbackKey() {
		return this.fallbackKey;
	}

	/** This failure with another origin (the key setting wrapping a resolver that threw). */
	UnreadableRequestException from(String origin) {
		return origin.equals(this.origin) ? this
				: new UnreadableRequestException(origin, this.reason, getCause(), this.policy, this.fallbackKey);
	}

	/** This failure of a key, with the key a shadow policy takes instead. */
	UnreadableRequestException withFallbackKey(String key) {
		return new UnreadableRequestException(this.origin, this.reason, getCause(), this.policy, key);
	}

	/** This failure as one policy's. */
	public UnreadableRequestException of(String policy) {
		return new UnreadableRequestException(this.origin, this.reason, getCause(), policy, this.fallbackKey);
	}
}
