package io.github.ratelimit.web.key;

import java.io.IOException;
import java.util.Enumeration;
import java.util.Locale;
import java.util.Map;

import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.Part;
import org.jspecify.annotations.Nullable;

/**
 * A request's parameters as keys, plans and exemptions read them: read once, before any of them, so
 * that every reader (the handler included) sees one set, or the request is refused. A container may
 * fail to decode them ({@code %FF} in a UTF-8 form, {@code %ZZ}, more than its
 * {@code maxParameterCount}); Tomcat throws only from the call that makes it parse them, and every later
 * call returns the parameters before the bad byte. Whoever reads first must therefore see the failure:
 * {@link #read} does, and remembers it for the request, so that a key read later does not silently take
 * a part of what the client sent while the handler binds another, or fall back to the client IP.
 */
public final class RequestParameters {

	private static final String ATTRIBUTE = RequestParameters.class.getName();

	/** What the attribute holds for parameters read without a failure. */
	private static final String READABLE = "";

	private RequestParameters() {
	}

	/**
	 * Reads a request's parameters, once per request.
	 * @param request the request
	 * @return why they cannot be read (no client input), or {@code null} when they can
	 */
	public static @Nullable String read(HttpServletRequest request) {
		Object known = request.getAttribute(ATTRIBUTE);
		if (known instanceof String reason) {
			return reason.isEmpty() ? null : reason;
		}
		String reason = READABLE;
		try {
			request.getParameterMap();
		}
		catch (RuntimeException ex) {
			// Tomcat's InvalidParameterException (an IllegalStateException), or another container's.
			reason = "its parameters cannot be decoded";
		}
		request.setAttribute(ATTRIBUTE, reason);
		return reason.isEmpty() ? null : reason;
	}

	/**
	 * Returns a parameter's first value as Spring MVC's {@code @RequestParam} finds it: from {@code name},
	 * or from {@code name[]} when there is no {@code name}.
	 * @param request the request
	 * @param name the parameter
	 * @param origin the setting that reads it, for the failure
	 * @return the value, or {@code null} when the request has none
	 * @throws UnreadableRequestException when the parameters cannot be decoded, or when a multipart request
	 * sends the name as a file part (no parameter to the container, a value to {@code @RequestPart})
	 */
	static @Nullable String first(HttpServletRequest request, String name, String origin) {
		String[] values = values(request, name, origin);
		return (values != null) ? values[0] : null;
	}

	/**
	 * Returns the account a parameter names however an application reads it (its first value, Spring MVC's
	 * values joined by commas, a list of them, the last one): every value, and every part of a value between
	 * commas, must name the same {@link KeyValues#identity}, blank ones aside; the array form {@code name[]}
	 * counts when there is no {@code name}.
	 * @return the identity; {@code null} when the parameter is absent or blank
	 * @throws UnreadableRequestException when its values name different accounts, as when the parameters
	 * cannot be read
	 */
	static @Nullable String identity(HttpServletRequest request, String name, String origin) {
		String[] values = values(request, name, origin);
		String found = null;
		for (int i = 0; values != null && i < values.length; i++) {
			for (String part : values[i].split(",", -1)) {
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

	private static String @Nullable [] values(HttpServletRequest request, String name, String origin) {
		String reason = read(request);
		if (reason != null) {
			throw new UnreadableRequestException(origin, reason, null);
		}
		if (isMultipart(request) && hasFilePart(request, name, origin)) {
			throw new UnreadableRequestException(origin, "parameter '" + name + "' is sent as a file part", null);
		}
		String[] values = request.getParameterValues(name);
		return (values != null && values.length > 0) ? values : request.getParameterValues(name + "[]");
	}

	/**
	 * Returns whether a request's body holds no parameters: it has one of another type than a form's
	 * ({@code application/json}, ...), so a {@code param:} key meant for its fields finds none.
	 * @param request the request
	 * @return {@code true} when its content type is neither a form nor multipart
	 */
	static boolean bodyHoldsNoParameters(HttpServletRequest request) {
		String type = request.getContentType();
		if (type == null || type.isBlank()) {
			return false;
		}
		String lower = type.trim().toLowerCase(Locale.ROOT);
		return !lower.startsWith("application/x-www-form-urlencoded") && !lower.startsWith("multipart/form-data");
	}

	/**
	 * Returns the request a key expression, a resolver bean or a condition is evaluated with: the request
	 * itself, or, when its parameters cannot be decoded, the request with parameters that refuse to be
	 * read (which a resolver catching the failure cannot hide: the read is remembered).
	 * @param request the request
	 * @param origin the setting evaluated, for the failure
	 * @return the request to evaluate with
	 */
	static HttpServletRequest guarded(HttpServletRequest request, String origin) {
		String reason = read(request);
		return (reason != null) ? new Guarded(request, origin, reason) : request;
	}

	/**
	 * Throws when a request from {@link #guarded} had its parameters read.
	 * @param request what {@link #guarded} returned
	 * @throws UnreadableRequestException when they were read
	 */
	static void checkGuarded(HttpServletRequest request) {
		if (request instanceof Guarded guarded && guarded.touched) {
			throw guarded.failure();
		}
	}

	private static boolean isMultipart(HttpServletRequest request) {
		String type = request.getContentType();
		return type != null && type.regionMatches(true, 0, "multipart/form-data", 0, 19);
	}

	private static boolean hasFilePart(HttpServletRequest request, String name, String origin) {
		Iterable<Part> parts;
		try {
			parts = request.getParts();
		}
		catch (IllegalStateException ex) {
			// No multipart configuration: no part is read as a value either.
			return false;
		}
		catch (IOException | ServletException | RuntimeException ex) {
			throw new UnreadableRequestException(origin, "its parts cannot be read", ex);
		}
		String array = name + "[]";
		for (Part part : parts) {
			if (part.getSubmittedFileName() != null && (name.equals(part.getName()) || array.equals(part.getName()))) {
				return true;
			}
		}
		return false;
	}

	/** A request whose parameters cannot be decoded: reading them throws, and is remembered. */
	private static final class Guarded extends HttpServletRequestWrapper {

		private final String origin;

		private final String reason;

		private boolean touched;

		Guarded(HttpServletRequest request, String origin, String reason) {
			super(request);
			this.origin = origin;
			this.reason = reason;
		}

		UnreadableRequestException failure() {
			return new UnreadableRequestException(this.origin, this.reason, null);
		}

		private UnreadableRequestException touch() {
			this.touched = true;
			return failure();
		}

		@Override
		public String getParameter(String name) {
			throw touch();
		}

		@Override
		public Map<String, String[]> getParameterMap() {
			throw touch();
		}

		@Override
		public Enumeration<String> getParameterNames() {
			throw touch();
		}

		@Override
		public String[] getParameterValues(String name) {
			throw touch();
		}

	}
}
