package io.github.ratelimit.web.clientip;

import java.net.InetAddress;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

/**
 * Reads the {@code for=} nodes of an RFC 7239 {@code Forwarded} header. Stateless and thread-safe.
 *
 * <p>{@code Forwarded: for=192.0.2.60;proto=http;by=203.0.113.43, for="[2001:db8:cafe::17]:4711"}
 * holds two elements, one per hop, each a {@code ;}-separated list of {@code name=value} pairs whose
 * value is a token or a quoted string; empty elements are ignored. Elements end at commas and pairs at
 * semicolons outside quoted strings, so reading is linear in the header's length, and no input makes it
 * throw. An element that is malformed, or has no (or more than one) {@code for} parameter, yields an
 * unreadable node, which ends the walk like a malformed {@code X-Forwarded-For} hop. Quoting is not
 * required where RFC 7239 requires it ({@code for=[::1]} is read as {@code for="[::1]"}); the node
 * itself is parsed strictly.
 *
 * <p>Spring's {@code ForwardedHeaderUtils.parseForwardedFor} reads the left-most element of the first
 * instance, the one the client writes, and splits quoted strings at their commas; and a regular
 * expression ({@code java.util.regex} recurses once per repetition of a quoted string's group) would
 * overflow on a long header. Hence this scanner.
 */
final class ForwardedElements {

	/** Stands for an element that cannot be read; not a valid node. */
	private static final String UNREADABLE = "";

	/** After {@code :_}: RFC 7239's obfport is {@code "_" 1*(ALPHA / DIGIT / "." / "_" / "-")}. */
	private static final Pattern OBFUSCATED_PORT = Pattern.compile("[\\w.-]*");

	private ForwardedElements() {
	}

	/**
	 * Returns the {@code for} value of each element of a header's values, right-most first.
	 * @param values the instances of the header, in order
	 * @param max the most values returned: those of the right-most elements
	 * @return each element's unquoted {@code for} value, an empty string for an element that cannot
	 * be read
	 */
	static List<String> forNodes(List<String> values, int max) {
		Deque<String> nodes = new ArrayDeque<>();
		for (String value : values) {
			forNodes(Objects.requireNonNullElse(value, ""), nodes, max);
		}
		List<String> rightMostFirst = new ArrayList<>(nodes.size());
		nodes.descendingIterator().forEachRemaining(rightMostFirst::add);
		return rightMostFirst;
	}

	private static void forNodes(String value, Deque<String> nodes, int max) {
		for (int start = 0; start <= value.length();) {
			int end = unquoted(value, start, value.length(), ',');
			String node = forNode(value, start, end);
			// Empty list elements are ignored (RFC 9110, 5.6.1).
			if (node != null) {
				if (nodes.size() == max) {
					nodes.removeFirst();
				}
				nodes.addLast(node);
			}
			start = end + 1;
		}
	}

	/**
	 * Returns the {@code for} value of the element {@code value[start, end)}: {@code null} when it is
	 * empty, {@link #UNREADABLE} when it is malformed or has no or two {@code for} parameters.
	 */
	private static @Nullable String forNode(String value, int start, int end) {
		String node = null;
		boolean empty = true;
		for (int pairStart = start; pairStart < end;) {
			int pairEnd = unquoted(value, pairStart, end, ';');
			String pair = trim(value, pairStart, pairEnd);
			pairStart = pairEnd + 1;
			if (pair.isEmpty()) {
				continue;
			}
			empty = false;
			int equals = pair.indexOf('=');
			String pairValue = (equals > 0 && ClientIpResolver.isToken(pair.substring(0, equals)))
					? pairValue(pair.substring(equals + 1)) : null;
			if (pairValue == null || (node != null && pair.regionMatches(true, 0, "for=", 0, 4))) {
				return UNREADABLE;
			}
			if (pair.regionMatches(true, 0, "for=", 0, 4)) {
				node = pairValue;
			}
		}
		return empty ? null : Objects.requireNonNullElse(node, UNREADABLE);
	}

	/**
	 * Returns a token as it is, a quoted string unquoted (at most one character longer than a hop), or
	 * {@code null} when it is neither.
	 */
	private static @Nullable String pairValue(String text) {
		if (!text.startsWith("\"")) {
			boolean token = text.chars().allMatch((c) -> c > ' ' && c != '"');
			return token ? text.substring(0, Math.min(text.length(), InetAddresses.MAX_HOP_LENGTH + 1)) : null;
		}
		StringBuilder unquoted = new StringBuilder();
		for (int i = 1; i < text.length(); i++) {
			char c = text.charAt(i);
			if (c == '"') {
				return (i == text.length() - 1) ? unquoted.toString() : null;
			}
			if (c == '\\' && i + 1 < text.length()) {
				c = text.charAt(++i);
			}
			if (unquoted.length() <= InetAddresses.MAX_HOP_LENGTH) {
				unquoted.append(c);
			}
		}
		return null;
	}

	/**
	 * Parses a {@code for} value: an address with an optional port, {@code null} for
	 * {@code unknown}, an obfuscated identifier ({@code _hidden}) or anything malformed.
	 * @param node the unquoted value, may be {@code null}
	 * @return the address, or {@code null}
	 */
	static @Nullable InetAddress parseNode(@Nullable String node) {
		if (node == null || node.isEmpty() || node.charAt(0) == '_' || node.equalsIgnoreCase("unknown")) {
			return null;
		}
		// An obfuscated port (for="192.0.2.43:_abc") says nothing about the address: drop it.
		int obfuscatedPort = node.lastIndexOf(":_");
		if (obfuscatedPort > 0) {
			if (!OBFUSCATED_PORT.matcher(node.substring(obfuscatedPort + 2)).matches()) {
				return null;
			}
			node = node.substring(0, obfuscatedPort);
		}
		return InetAddresses.parseHop(node);
	}

	/**
	 * Returns the index of the first {@code separator} in {@code value[from, end)} outside a quoted string,
	 * or {@code end}: an unclosed quote runs to the end.
	 */
	private static int unquoted(String value, int from, int end, char separator) {
		boolean quoted = false;
		for (int i = from; i < end; i++) {
			char c = value.charAt(i);
			if (quoted && c == '\\') {
				i++;
			}
			else if (c == '"') {
				quoted = !quoted;
			}
			else if (c == separator && !quoted) {
				return i;
			}
		}
		return end;
	}

	/** Returns {@code value[start, end)} without the spaces and tabs around it. */
	private static String trim(String value, int start, int end) {
		while (start < end && (value.charAt(start) == ' ' || value.charAt(start) == '\t')) {
			start++;
		}
		while (end > start && (value.charAt(end - 1) == ' ' || value.charAt(end - 1) == '\t')) {
			end--;
		}
		return value.substring(start, end);
	}

}
