package io.github.ratelimit.redis;

import java.util.Locale;
import java.util.Set;
import java.util.concurrent.TimeoutException;

import org.springframework.core.NestedExceptionUtils;

/**
 * What a failed Redis call says about Redis: an error answered by a server that cannot serve any
 * call now (an outage, like no answer at all), an error answered for that call only, wrong
 * credentials, or no answer (a timeout, a lost connection). Immutable.
 * <p>
 * Answered errors are recognised by their reply's first word (Redis' error code), found in the
 * message of the client's exception or of one of its causes: Lettuce's
 * {@code RedisCommandExecutionException}, Jedis' {@code JedisDataException}, as Spring Data Redis
 * wraps them or not.
 */
record RedisError(Kind kind, String code, String message) {

	enum Kind {

		/** No answer: timeout, refused or lost connection, client gave up. */
		UNREACHABLE,

		/** Answered, but the server can serve no call now: CLUSTERDOWN, LOADING, BUSY, MASTERDOWN, READONLY. */
		OUTAGE,

		/** Answered: the credentials are refused (WRONGPASS, NOAUTH); every call will fail alike. */
		CREDENTIALS,

		/** Answered, for this call only: OOM, a script error, NOPERM on a key, any other error reply. */
		ANSWERED;

		/**
		 * Says whether this kind counts for the breaker: an outage of the node rather than one failed call.
		 * @return {@code true} for errors that make every call fail
		 */
		boolean isOutage() {
			return this != ANSWERED;
		}

	}

	/** Error codes a server answers when it cannot serve any call, whatever the call. */
	static final Set<String> OUTAGE_CODES = Set.of("CLUSTERDOWN", "LOADING", "BUSY", "MASTERDOWN", "READONLY");

	static final Set<String> CREDENTIAL_CODES = Set.of("WRONGPASS", "NOAUTH");

	private static final Set<String> ANSWER_CLASSES = Set.of("io.lettuce.core.RedisCommandExecutionException",
			"redis.clients.jedis.exceptions.JedisDataException");

	/**
	 * Classifies a failure.
	 * @param ex what the call threw
	 * @return its kind, error code ({@code TIMEOUT} or {@code UNREACHABLE} when not answered) and message
	 */
	static RedisError of(Throwable ex) {
		for (Throwable cause = ex; cause != null; cause = (cause.getCause() == cause) ? null : cause.getCause()) {
			if (cause instanceof TimeoutException) {
				return new RedisError(Kind.UNREACHABLE, "TIMEOUT", "no answer within the timeout");
			}
			String message = cause.getMessage();
			String code = code(message);
			if (code == null) {
				continue;
			}
			if (OUTAGE_CODES.contains(code)) {
				return new RedisError(Kind.OUTAGE, code, message);
			}
			if (CREDENTIAL_CODES.contains(code)) {
				return new RedisError(Kind.CREDENTIALS, code, message);
			}
			if (isAnswer(cause.getClass())) {
				return new RedisError(Kind.ANSWERED, code, message);
			}
		}
		return new RedisError(Kind.UNREACHABLE, "UNREACHABLE", describe(ex));
	}

	/**
	 * Says whether the error names the application's credentials or permissions (WRONGPASS, NOAUTH,
	 * NOPERM).
	 * @return {@code true} when the fix is {@code spring.data.redis.username}/{@code password} or the ACL
	 */
	boolean isCredentials() {
		return this.kind == Kind.CREDENTIALS || "NOPERM".equals(this.code);
	}

	private static String code(String message) {
		if (message == null) {
			return null;
		}
		int end = 0;
		while (end < message.length() && end < 24 && Character.isUpperCase(message.charAt(end))) {
			end++;
		}
		if (end < 2 || (end < message.length() && message.charAt(end) != ' ')) {
			return null;
		}
		return message.substring(0, end).toUpperCase(Locale.ROOT);
	}

	private static boolean isAnswer(Class<?> type) {
		for (Class<?> c = type; c != null; c = c.getSuperclass()) {
			if (ANSWER_CLASSES.contains(c.getName())) {
				return true;
			}
		}
		return false;
	}

	static String describe(Throwable ex) {
		Throwable root = NestedExceptionUtils.getRootCause(ex);
		return (root == null) ? String.valueOf(ex) : ex + ", caused by " + root;
	}
}
