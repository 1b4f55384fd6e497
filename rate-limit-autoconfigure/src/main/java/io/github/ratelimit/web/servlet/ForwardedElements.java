package io.github.ratelimit.web.servlet;

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
 * value is a token or a quoted string; empty elements are ignored. Parsing is single-pass and linear
 * in the header's length; no input makes it throw. An element that is malformed, or has no (or more than one) {@code for}
 * parameter, yields an unreadable node, which ends the walk like a malformed {@code X-Forwarded-For}
 * hop. A scanner, not a regular expression: {@code java.util.regex} recurses once per repetition of
 * a group such as a quoted string's, which a long header would overflow.
 * Quoting is not required where RFC 7239 requires it ({@code for=[::1]} is read as
 * {@code for="[::1]"}); the node itself is parsed strictly.
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
		int length = value.length();
		int i = 0;
		while (i <= length) {
			// One element: pairs until an unquoted ',' or the end.
			String node = null;
			boolean malformed = false;
			boolean sawFor = false;
			boolean empty = true;
			while (true) {
				i = skipWhitespace(value, i);
				if (i >= length || value.charAt(i) == ',') {
					break;
				}
				if (value.charAt(i) == ';') {
					i++;
					continue;
				}
				empty = false;
				int nameStart = i;
				while (i < length && ClientIpResolver.isTokenChar(value.charAt(i))) {
					i++;
				}
				int nameEnd = i;
				if (nameEnd == nameStart || i >= length || value.charAt(i) != '=') {
					malformed = true;
					i = skipToElementEnd(value, i);
					break;
				}
				i++;
				String pairValue;
				if (i < length && value.charAt(i) == '"') {
					StringBuilder unquoted = new StringBuilder();
					i++;
					boolean closed = false;
					while (i < length) {
						char c = value.charAt(i++);
						if (c == '"') {
							closed = true;
							break;
						}
						if (c == '\\' && i < length) {
							c = value.charAt(i++);
						}
						if (unquoted.length() <= InetAddresses.MAX_HOP_LENGTH) {
							unquoted.append(c);
						}
					}
					if (!closed) {
						malformed = true;
						break;
					}
					pairValue = unquoted.toString();
				}
				else {
					int valueStart = i;
					while (i < length && value.charAt(i) != ';' && value.charAt(i) != ','
							&& value.charAt(i) != '"' && value.charAt(i) > ' ') {
						i++;
					}
					pairValue = value.substring(valueStart, Math.min(i, valueStart + InetAddresses.MAX_HOP_LENGTH + 1));
				}
				i = skipWhitespace(value, i);
				if (i < length && value.charAt(i) != ';' && value.charAt(i) != ',') {
					malformed = true;
					i = skipToElementEnd(value, i);
					break;
				}
				if (nameEnd - nameStart == 3 && value.regionMatches(true, nameStart, "for", 0, 3)) {
					if (sawFor) {
						malformed = true;
					}
					sawFor = true;
					node = pairValue;
				}
			}
			// Empty list elements are ignored (RFC 9110, 5.6.1).
			if (!empty) {
				if (nodes.size() == max) {
					nodes.removeFirst();
				}
				nodes.addLast((malformed || !sawFor || node == null) ? UNREADABLE : node);
			}
			i++;
		}
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

	/** Moves past the rest of a malformed element, honouring quoted strings. */
	private static int skipToElementEnd(String value, int i) {
		boolean quoted = false;
		while (i < value.length()) {
			char c = value.charAt(i);
			if (quoted && c == '\\') {
				i += 2;
				continue;
			}
			if (c == '"') {
				quoted = !quoted;
			}
			else if (c == ',' && !quoted) {
				return i;
			}
			i++;
		}
		return value.length();
	}

	private static int skipWhitespace(String value, int i) {
		while (i < value.length() && (value.charAt(i) == ' ' || value.charAt(i) == '\t')) {
			i++;
		}
		return i;
	}

}
