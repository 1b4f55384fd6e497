package io.github.ratelimit.web.clientip;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

/**
 * Strict parsing and canonical formatting of IP address literals, never through DNS. Stateless and
 * thread-safe.
 *
 * <p>Accepted forms:
 * <ul>
 * <li>IPv4: exactly four dot-separated decimal parts, each {@code 0}-{@code 255} with at most
 * three digits and no leading zeros ({@code "01.2.3.4"} is rejected because BSD-style parsers
 * read it as octal, so two components could disagree on which client it names).</li>
 * <li>IPv6: the RFC 4291 text forms, optionally wrapped in {@code [brackets]}, with an optional
 * embedded IPv4 tail ({@code "::ffff:1.2.3.4"}) written as strictly as IPv4. Zone ids ({@code %eth0})
 * are rejected.</li>
 * </ul>
 * Java's lenient legacy forms ({@code "127.1"}, {@code "1.2.3"}, {@code "0x7f.0.0.1"}, a bare
 * decimal {@code "2130706433"}), non-ASCII digits and host names are rejected. IPv4-mapped IPv6
 * addresses come back as the {@link Inet4Address} they map.
 *
 * <p>What the JDK does and what it does not: Java 17 has no parser of literals only
 * ({@code InetAddress.ofLiteral} is Java 22), and {@code InetAddress.getByName} reads the legacy forms
 * and looks up in DNS whatever it cannot read. So IPv4 is read here (four octets are quickly told), and
 * IPv6 is checked here for what the JDK allows and we do not (non-ASCII or more than four digits in a
 * group, a lenient IPv4 tail, a zone id) and then handed to the JDK in brackets, which it reads as an
 * IPv6 literal or refuses, never as a host name to look up. Formatting is RFC 5952's, which
 * {@code getHostAddress()} does not do.
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

	/** Longest zone id accepted after {@code %}: interface names and numeric scope ids are short. */
	private static final int MAX_ZONE_LENGTH = 32;

	/** Longest accepted hop: a bracketed IPv6 literal with a zone id and a port. */
	static final int MAX_HOP_LENGTH = MAX_LITERAL_LENGTH + 1 + MAX_ZONE_LENGTH + 1 + 5;

	/** ASCII groups of at most four hex digits; a dotted tail is checked as IPv4; the JDK checks the rest. */
	private static final Pattern IPV6 = Pattern.compile("(?:[0-9A-Fa-f]{0,4}:)+(?:[0-9A-Fa-f]{1,4}|\\d{1,3}(?:\\.\\d{1,3}){3})?");

	/** RFC 6874 zone ids are unreserved characters. */
	private static final Pattern ZONE = Pattern.compile("[\\w.~-]{1," + MAX_ZONE_LENGTH + "}");

	private static final Pattern PORT = Pattern.compile("\\d{1,5}");

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
		if (literal.indexOf(':') >= 0) {
			return parseIpv6(literal);
		}
		long bits = canonicalIpv4Bits(literal);
		return (bits >= 0) ? byAddress(new byte[] { (byte) (bits >> 24), (byte) (bits >> 16), (byte) (bits >> 8),
				(byte) bits }) : null;
	}

	private static @Nullable InetAddress parseIpv6(String text) {
		if (text.length() > MAX_IPV6_LENGTH || !IPV6.matcher(text).matches()) {
			return null;
		}
		String tail = text.substring(text.lastIndexOf(':') + 1);
		if (tail.indexOf('.') >= 0 && canonicalIpv4Bits(tail) < 0) {
			return null;
		}
		try {
			// In brackets and with a colon, the JDK reads an IPv6 literal or throws: it never looks up a
			// name. It also turns IPv4-mapped addresses into an Inet4Address.
			return InetAddress.getByName("[" + text + "]");
		}
		catch (UnknownHostException ex) {
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
	 * bits, without parsing it into an {@link InetAddress}. This is the one strict IPv4 parser.
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
			// Not Character.isDigit(): that also accepts non-ASCII digits.
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
			String address = hop.substring(0, firstColon);
			return (isPortSuffix(hop, firstColon) && address.indexOf('.') >= 0) ? parse(address) : null;
		}
		return parseWithoutZone(hop);
	}

	/** Parses an IPv6 literal (no brackets) with an optional {@code %zone}. */
	private static @Nullable InetAddress parseWithoutZone(String text) {
		int percent = text.indexOf('%');
		if (percent < 0) {
			return parse(text);
		}
		String address = text.substring(0, percent);
		boolean valid = ZONE.matcher(text.substring(percent + 1)).matches() && address.indexOf(':') >= 0;
		return valid ? parse(address) : null;
	}

	/** Whether {@code text[colon..]} is {@code :} and a decimal port 0-65535. */
	private static boolean isPortSuffix(String text, int colon) {
		String port = text.substring(colon + 1);
		return text.charAt(colon) == ':' && PORT.matcher(port).matches() && Integer.parseInt(port) <= 65535;
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
		InetAddress address = byAddress(bytes);
		return (address instanceof Inet4Address) ? address.getHostAddress() : formatIpv6(bytes);
	}

	/**
	 * Returns the address bytes, with IPv4-mapped IPv6 addresses reduced to their four IPv4 bytes.
	 * @param address the address
	 * @return 4 bytes for IPv4 (mapped or not), 16 for other IPv6 addresses
	 */
	static byte[] toBytes(InetAddress address) {
		return byAddress(address.getAddress()).getAddress();
	}

	/** The JDK maps IPv4-mapped bytes to an {@link Inet4Address}, and resolves no name. */
	private static InetAddress byAddress(byte[] bytes) {
		try {
			return InetAddress.getByAddress(bytes);
		}
		catch (UnknownHostException ex) {
			throw new IllegalArgumentException("An IP address has 4 or 16 bytes, not " + bytes.length, ex);
		}
	}

	/** RFC 5952: lowercase, no leading zeros, the longest run of two or more zero groups (the first on a tie) as ::. */
	private static String formatIpv6(byte[] bytes) {
		int[] groups = new int[8];
		int bestStart = -1;
		int bestLength = 1;
		int run = 0;
		for (int g = 0; g < 8; g++) {
			groups[g] = ((bytes[2 * g] & 0xff) << 8) | (bytes[2 * g + 1] & 0xff);
			run = (groups[g] == 0) ? run + 1 : 0;
			if (run > bestLength) {
				bestStart = g - run + 1;
				bestLength = run;
			}
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
