package io.github.ratelimit.web.servlet;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;

import org.jspecify.annotations.Nullable;

/**
 * Strict parsing and canonical formatting of IP address literals. Parsing never performs a DNS
 * lookup: the text is validated and converted to bytes here, and only the bytes are handed to
 * {@link InetAddress#getByAddress(byte[])}, which does no name resolution. Stateless and
 * thread-safe.
 *
 * <p>Accepted forms:
 * <ul>
 * <li>IPv4: exactly four dot-separated decimal parts, each {@code 0}-{@code 255} with at most
 * three digits and no leading zeros ({@code "01.2.3.4"} is rejected because BSD-style parsers
 * read it as octal, so two components could disagree on which client it names).</li>
 * <li>IPv6: the RFC 4291 text forms, optionally wrapped in {@code [brackets]}, with an optional
 * embedded IPv4 tail ({@code "::ffff:1.2.3.4"}). Zone ids ({@code %eth0}) are rejected.</li>
 * </ul>
 * Java's lenient legacy forms ({@code "127.1"}, {@code "1.2.3"}, {@code "0x7f.0.0.1"}, a bare
 * decimal {@code "2130706433"}) and host names are rejected. IPv4-mapped IPv6 addresses come back
 * as the {@link Inet4Address} they map.
 *
 * <p>{@link #parseHop(String)} reads the hop syntax that proxies write in forwarding headers (and
 * containers in remote addresses): the same literals, plus a port ({@code 203.0.113.7:4711},
 * {@code [2001:db8::1]:443}) and an IPv6 zone id ({@code fe80::1%eth0}), which are dropped. An
 * unbracketed text with more than one colon is always an IPv6 address: {@code 2001:db8::1:443} is
 * the address {@code 2001:db8::1:443}, never {@code 2001:db8::1} and a port.
 */
final class InetAddresses {

	/** Longest IPv6 text form: {@code ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255}. */
	private static final int MAX_IPV6_LENGTH = 45;

	/** Longest accepted input: an IPv6 literal of maximum length inside brackets. */
	static final int MAX_LITERAL_LENGTH = MAX_IPV6_LENGTH + 2;

	private static final int MAX_IPV4_LENGTH = 15;

	/** Longest zone id accepted after {@code %}: interface names and numeric scope ids are short. */
	private static final int MAX_ZONE_LENGTH = 32;

	/** Longest accepted hop: a bracketed IPv6 literal with a zone id and a port. */
	static final int MAX_HOP_LENGTH = MAX_LITERAL_LENGTH + 1 + MAX_ZONE_LENGTH + 1 + 5;

	private InetAddresses() {
	}

	/**
	 * Parses an IPv4 or IPv6 address literal, surrounding whitespace ignored.
	 * @param text the text to parse, may be {@code null}
	 * @return the address, or {@code null} if {@code text} is not a valid literal
	 */
	static @Nullable InetAddress parse(@Nullable String text) {
		if (text == null) {
			return null;
		}
		String literal = text.trim();
		if (literal.length() > MAX_LITERAL_LENGTH) {
			return null;
		}
		if (literal.length() >= 2 && literal.charAt(0) == '[' && literal.charAt(literal.length() - 1) == ']') {
			literal = literal.substring(1, literal.length() - 1);
			// Brackets are IPv6 syntax only.
			if (literal.indexOf(':') < 0) {
				return null;
			}
		}
		byte[] bytes = (literal.indexOf(':') >= 0) ? parseIpv6(literal) : parseIpv4(literal);
		if (bytes == null) {
			return null;
		}
		try {
			// Never resolves a name; also turns IPv4-mapped IPv6 bytes into an Inet4Address.
			return InetAddress.getByAddress(bytes);
		}
		catch (UnknownHostException ex) {
			// Only thrown for an illegal array length, which parsing rules out.
			return null;
		}
	}

	/**
	 * Tells whether a text is an IPv4 address in canonical dotted decimal (four decimal octets of
	 * 0-255, no leading zeros, nothing else): then {@link #format} of its address is the text itself.
	 * @param text a text
	 * @return {@code true} for e.g. {@code 203.0.113.7}; {@code false} for {@code 203.0.113.07},
	 * {@code " 203.0.113.7"}, {@code 203.0.113.7:80} or any IPv6 literal
	 */
	static boolean isCanonicalIpv4(String text) {
		return canonicalIpv4Bits(text) >= 0;
	}

	/**
	 * Returns the address of a canonical IPv4 text (as {@link #isCanonicalIpv4} accepts it) as its 32
	 * bits, without parsing it into an {@link InetAddress}.
	 * @param text e.g. {@code 127.0.0.1}
	 * @return the bits as a non-negative number, or {@code -1} when the text is not canonical IPv4
	 */
	static long canonicalIpv4Bits(String text) {
		int length = text.length();
		if (length < 7 || length > 15) {
			return -1;
		}
		int octets = 0;
		int value = 0;
		int digits = 0;
		long bits = 0;
		for (int i = 0; i <= length; i++) {
			char c = (i < length) ? text.charAt(i) : '.';
			if (c == '.') {
				if (digits == 0 || value > 255) {
					return -1;
				}
				octets++;
				bits = (bits << 8) | value;
				value = 0;
				digits = 0;
			}
			else if (c >= '0' && c <= '9') {
				if ((digits > 0 && value == 0) || ++digits > 3) {
					return -1;
				}
				value = value * 10 + (c - '0');
			}
			else {
				return -1;
			}
		}
		return (octets == 4) ? bits : -1;
	}

	/**
	 * Parses one hop of a forwarding header, or a remote address reported by a container: an address
	 * literal as {@link #parse(String)} accepts it, optionally with a port ({@code 1.2.3.4:80},
	 * {@code [::1]:80}) and, for IPv6, a zone id ({@code fe80::1%eth0}, {@code [fe80::1%eth0]:80});
	 * surrounding whitespace ignored. The port and the zone id are validated and dropped.
	 * @param text the text to parse, may be {@code null}
	 * @return the address, or {@code null} if {@code text} is not a valid hop
	 */
	static @Nullable InetAddress parseHop(@Nullable String text) {
		if (text == null) {
			return null;
		}
		String hop = text.trim();
		if (hop.isEmpty() || hop.length() > MAX_HOP_LENGTH) {
			return null;
		}
		if (hop.charAt(0) == '[') {
			int close = hop.indexOf(']');
			if (close < 0 || (close + 1 < hop.length() && !isPortSuffix(hop, close + 1))) {
				return null;
			}
			String inside = hop.substring(1, close);
			return (inside.indexOf(':') >= 0) ? parseWithoutZone(inside) : null;
		}
		int firstColon = hop.indexOf(':');
		if (firstColon < 0) {
			return parse(hop);
		}
		if (firstColon == hop.lastIndexOf(':')) {
			// One colon: only IPv4 with a port; IPv6 literals always have two or more.
			if (!isPortSuffix(hop, firstColon)) {
				return null;
			}
			String address = hop.substring(0, firstColon);
			return (address.indexOf('.') >= 0) ? parse(address) : null;
		}
		return parseWithoutZone(hop);
	}

	/** Parses an IPv6 literal (no brackets) with an optional {@code %zone}. */
	private static @Nullable InetAddress parseWithoutZone(String text) {
		int percent = text.indexOf('%');
		if (percent < 0) {
			return parse(text);
		}
		String zone = text.substring(percent + 1);
		if (zone.isEmpty() || zone.length() > MAX_ZONE_LENGTH || !zone.chars().allMatch(InetAddresses::isZoneChar)) {
			return null;
		}
		String address = text.substring(0, percent);
		return (address.indexOf(':') >= 0) ? parse(address) : null;
	}

	/** RFC 6874 zone ids are unreserved characters. */
	private static boolean isZoneChar(int c) {
		return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.'
				|| c == '_' || c == '~';
	}

	/** Whether {@code text[colon..]} is {@code :} and a decimal port 0-65535. */
	private static boolean isPortSuffix(String text, int colon) {
		if (text.charAt(colon) != ':') {
			return false;
		}
		int length = text.length() - colon - 1;
		if (length < 1 || length > 5) {
			return false;
		}
		int port = 0;
		for (int i = colon + 1; i < text.length(); i++) {
			char c = text.charAt(i);
			if (c < '0' || c > '9') {
				return false;
			}
			port = port * 10 + (c - '0');
		}
		return port <= 65535;
	}

	/**
	 * Returns the network of an address as text: the address with the bits after the prefix cleared,
	 * a slash and the prefix ({@code 2001:db8:7:8::/64}), or the bare address when the prefix is the
	 * full length ({@code 203.0.113.7}).
	 * @param address the address
	 * @param ipv4Prefix the prefix for IPv4 addresses (IPv4-mapped IPv6 included), 0-32
	 * @param ipv6Prefix the prefix for IPv6 addresses, 0-128
	 * @return the canonical text of the network
	 */
	static String formatNetwork(InetAddress address, int ipv4Prefix, int ipv6Prefix) {
		byte[] bytes = toBytes(address);
		int prefix = (bytes.length == 4) ? ipv4Prefix : ipv6Prefix;
		if (prefix >= bytes.length * 8) {
			return format(bytes);
		}
		mask(bytes, prefix);
		return format(bytes) + "/" + prefix;
	}

	/** Clears the bits of {@code bytes} after the first {@code prefixLength}. */
	static void mask(byte[] bytes, int prefixLength) {
		for (int i = 0; i < bytes.length; i++) {
			int bitsInByte = Math.max(0, Math.min(8, prefixLength - i * 8));
			bytes[i] &= (byte) ((0xff << (8 - bitsInByte)) & 0xff);
		}
	}

	/**
	 * Formats an address canonically, so that one client always yields the same string: IPv4 in
	 * dotted decimal, IPv6 in the RFC 5952 form (lowercase, no leading zeros, the longest run of
	 * two or more zero groups compressed to {@code ::}). IPv4-mapped IPv6 addresses are formatted
	 * as the IPv4 address they map; IPv6 zone ids are dropped. Never performs a DNS lookup.
	 * @param address the address to format
	 * @return the canonical text form
	 */
	static String format(InetAddress address) {
		return format(address.getAddress());
	}

	/**
	 * Formats raw address bytes like {@link #format(InetAddress)}.
	 * @param bytes 4 bytes for IPv4 or 16 for IPv6
	 * @return the canonical text form
	 */
	static String format(byte[] bytes) {
		if (bytes.length == 4) {
			return formatIpv4(bytes, 0);
		}
		if (isIpv4Mapped(bytes)) {
			return formatIpv4(bytes, 12);
		}
		return formatIpv6(bytes);
	}

	/**
	 * Returns the address bytes, with IPv4-mapped IPv6 addresses reduced to their four IPv4 bytes.
	 * @param address the address
	 * @return 4 bytes for IPv4 (mapped or not), 16 for other IPv6 addresses
	 */
	static byte[] toBytes(InetAddress address) {
		byte[] bytes = address.getAddress();
		if (bytes.length == 16 && isIpv4Mapped(bytes)) {
			byte[] ipv4 = new byte[4];
			System.arraycopy(bytes, 12, ipv4, 0, 4);
			return ipv4;
		}
		return bytes;
	}

	private static boolean isIpv4Mapped(byte[] bytes) {
		if (bytes.length != 16) {
			return false;
		}
		for (int i = 0; i < 10; i++) {
			if (bytes[i] != 0) {
				return false;
			}
		}
		return (bytes[10] == (byte) 0xff) && (bytes[11] == (byte) 0xff);
	}

	private static byte @Nullable [] parseIpv4(String text) {
		if (text.isEmpty() || text.length() > MAX_IPV4_LENGTH) {
			return null;
		}
		byte[] bytes = new byte[4];
		int part = 0;
		int start = 0;
		for (int i = 0; i <= text.length(); i++) {
			if (i == text.length() || text.charAt(i) == '.') {
				if (part == 4) {
					return null;
				}
				int value = parseDecimalOctet(text, start, i);
				if (value < 0) {
					return null;
				}
				bytes[part++] = (byte) value;
				start = i + 1;
			}
		}
		return (part == 4) ? bytes : null;
	}

	/**
	 * Parses {@code text[start, end)} as a decimal 0-255 without sign or leading zeros.
	 * @return the value, or -1 if invalid
	 */
	private static int parseDecimalOctet(String text, int start, int end) {
		int length = end - start;
		if (length < 1 || length > 3) {
			return -1;
		}
		if (length > 1 && text.charAt(start) == '0') {
			return -1;
		}
		int value = 0;
		for (int i = start; i < end; i++) {
			char c = text.charAt(i);
			// Not Character.isDigit(): that also accepts non-ASCII digits.
			if (c < '0' || c > '9') {
				return -1;
			}
			value = value * 10 + (c - '0');
		}
		return (value <= 255) ? value : -1;
	}

	private static byte @Nullable [] parseIpv6(String text) {
		if (text.length() > MAX_IPV6_LENGTH) {
			return null;
		}
		int[] groups = new int[8];
		int count = 0;
		int compressAt = -1;
		int i = 0;
		int length = text.length();
		if (text.startsWith("::")) {
			compressAt = 0;
			i = 2;
			if (i == length) {
				return toBytes(groups);
			}
		}
		else if (text.charAt(0) == ':') {
			return null;
		}
		while (i < length) {
			int end = i;
			while (end < length && text.charAt(end) != ':') {
				end++;
			}
			if (end == i) {
				// An empty group: only legal as the single '::'.
				return null;
			}
			int dot = text.indexOf('.', i);
			if (dot >= 0 && dot < end) {
				// Embedded IPv4: must be the last group and occupies two 16-bit groups.
				if (end != length || count > 6) {
					return null;
				}
				byte[] ipv4 = parseIpv4(text.substring(i, end));
				if (ipv4 == null) {
					return null;
				}
				groups[count++] = ((ipv4[0] & 0xff) << 8) | (ipv4[1] & 0xff);
				groups[count++] = ((ipv4[2] & 0xff) << 8) | (ipv4[3] & 0xff);
				i = end;
				break;
			}
			int value = parseHexGroup(text, i, end);
			if (value < 0 || count == 8) {
				return null;
			}
			groups[count++] = value;
			if (end == length) {
				i = end;
				break;
			}
			// text.charAt(end) == ':'
			if (end + 1 < length && text.charAt(end + 1) == ':') {
				if (compressAt >= 0) {
					return null;
				}
				compressAt = count;
				i = end + 2;
			}
			else if (end + 1 == length) {
				// A trailing single ':'.
				return null;
			}
			else {
				i = end + 1;
			}
		}
		if (compressAt < 0) {
			return (count == 8) ? toBytes(groups) : null;
		}
		// '::' stands for at least one zero group.
		if (count > 7) {
			return null;
		}
		int shift = 8 - count;
		for (int g = count - 1; g >= compressAt; g--) {
			groups[g + shift] = groups[g];
			groups[g] = 0;
		}
		return toBytes(groups);
	}

	/**
	 * Parses {@code text[start, end)} as 1-4 hex digits.
	 * @return the value, or -1 if invalid
	 */
	private static int parseHexGroup(String text, int start, int end) {
		if (end - start > 4) {
			return -1;
		}
		int value = 0;
		for (int i = start; i < end; i++) {
			int digit = Character.digit(text.charAt(i), 16);
			// Character.digit() also accepts non-ASCII digits, so check the range explicitly.
			if (digit < 0 || text.charAt(i) > 'f') {
				return -1;
			}
			value = (value << 4) | digit;
		}
		return value;
	}

	private static byte[] toBytes(int[] groups) {
		byte[] bytes = new byte[16];
		for (int g = 0; g < 8; g++) {
			bytes[2 * g] = (byte) (groups[g] >>> 8);
			bytes[2 * g + 1] = (byte) groups[g];
		}
		return bytes;
	}

	private static String formatIpv4(byte[] bytes, int offset) {
		return (bytes[offset] & 0xff) + "." + (bytes[offset + 1] & 0xff) + "." + (bytes[offset + 2] & 0xff) + "."
				+ (bytes[offset + 3] & 0xff);
	}

	private static String formatIpv6(byte[] bytes) {
		int[] groups = new int[8];
		for (int g = 0; g < 8; g++) {
			groups[g] = ((bytes[2 * g] & 0xff) << 8) | (bytes[2 * g + 1] & 0xff);
		}
		// RFC 5952 4.2: compress the longest run of zero groups (the first on a tie), never a
		// single group.
		int bestStart = -1;
		int bestLength = 1;
		for (int g = 0; g < 8;) {
			if (groups[g] != 0) {
				g++;
				continue;
			}
			int end = g;
			while (end < 8 && groups[end] == 0) {
				end++;
			}
			if (end - g > bestLength) {
				bestStart = g;
				bestLength = end - g;
			}
			g = end;
		}
		StringBuilder text = new StringBuilder(39);
		for (int g = 0; g < 8; g++) {
			if (g == bestStart) {
				text.append("::");
				g += bestLength - 1;
				continue;
			}
			if (text.length() > 0 && text.charAt(text.length() - 1) != ':') {
				text.append(':');
			}
			text.append(Integer.toHexString(groups[g]));
		}
		return text.toString();
	}

}
