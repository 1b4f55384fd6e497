package io.github.ratelimit.web.clientip;

import java.math.BigInteger;
import java.net.InetAddress;
import java.util.Arrays;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

/**
 * An IPv4 or IPv6 address block in CIDR notation ({@code "10.0.0.0/8"}, {@code "2001:db8::/32"}),
 * or a single address ({@code "192.168.1.7"} meaning {@code /32}, {@code "::1"} meaning
 * {@code /128}). Used to describe trusted proxies. Immutable and thread-safe.
 *
 * <p>Parsing is strict and never performs a DNS lookup: host names are refused. Bits after the
 * prefix are ignored, so {@code "10.1.2.3/8"} is the same range as {@code "10.0.0.0/8"}. An
 * IPv4-mapped IPv6 block such as {@code "::ffff:10.0.0.0/104"} is the IPv4 block
 * {@code "10.0.0.0/8"}. IPv4 and IPv6 are separate families: {@code "::/0"} holds no IPv4 address
 * (mapped or not), so trusting everything takes both {@code "0.0.0.0/0"} and {@code "::/0"}.
 */
public final class IpAddressRange {

	private static final Pattern DIGITS = Pattern.compile("\\d+");

	private final byte[] network;

	private final int prefixLength;

	private IpAddressRange(byte[] network, int prefixLength) {
		this.network = network;
		this.prefixLength = prefixLength;
	}

	/**
	 * Parses a CIDR block or a single address; surrounding whitespace is ignored.
	 * @param cidr the text, for example {@code "10.0.0.0/8"}, {@code "fd00::/8"} or
	 * {@code "127.0.0.1"}
	 * @return the range
	 * @throws IllegalArgumentException if {@code cidr} is not a valid IPv4 or IPv6 CIDR block or
	 * address literal; the message quotes the input and says what is wrong
	 */
	public static IpAddressRange parse(String cidr) {
		String text = cidr.trim();
		if (text.isEmpty()) {
			throw invalid(cidr, "it is empty");
		}
		int slash = text.indexOf('/');
		if (slash >= 0 && text.indexOf('/', slash + 1) >= 0) {
			throw invalid(cidr, "it contains more than one '/'");
		}
		String addressText = (slash >= 0) ? text.substring(0, slash).trim() : text;
		if (addressText.isEmpty()) {
			throw invalid(cidr, "the address before '/' is missing");
		}
		InetAddress address = InetAddresses.parse(addressText);
		if (address == null) {
			throw invalid(cidr, "'" + addressText + "' is not an IPv4 or IPv6 address literal"
					+ " (host names, zone ids and short forms such as '127.1' are not allowed)");
		}
		byte[] bytes = InetAddresses.toBytes(address);
		boolean ipv4 = (bytes.length == 4);
		// An IPv4-mapped IPv6 address is IPv4 here, but its prefix still counts all 128 bits.
		boolean mapped = ipv4 && addressText.indexOf(':') >= 0;
		int bits = bytes.length * 8;
		int prefixLength = bits;
		if (slash >= 0) {
			String prefixText = text.substring(slash + 1).trim();
			if (prefixText.isEmpty()) {
				throw invalid(cidr, "the prefix length after '/' is missing");
			}
			if (!DIGITS.matcher(prefixText).matches()) {
				throw invalid(cidr, "prefix length '" + prefixText + "' is not a decimal number");
			}
			// Too large for any family, and no overflow.
			prefixLength = new BigInteger(prefixText).min(BigInteger.valueOf(999)).intValue();
			if (mapped) {
				if (prefixLength < 96 || prefixLength > 128) {
					throw invalid(cidr, "prefix length must be between 96 and 128 for an IPv4-mapped IPv6 address");
				}
				prefixLength -= 96;
			}
			else if (prefixLength > bits) {
				throw invalid(cidr, "prefix length must be between 0 and " + bits + " for " + (ipv4 ? "IPv4" : "IPv6"));
			}
		}
		InetAddresses.mask(bytes, prefixLength);
		return new IpAddressRange(bytes, prefixLength);
	}

	/**
	 * Returns whether the address lies in this range. IPv4-mapped IPv6 addresses
	 * ({@code ::ffff:a.b.c.d}) are treated as the IPv4 address they map; otherwise an IPv4
	 * address is never in an IPv6 range and vice versa.
	 * @param address the address to test, may be {@code null}
	 * @return {@code true} if the address is in this range, {@code false} otherwise or if
	 * {@code address} is {@code null}
	 */
	public boolean contains(@Nullable InetAddress address) {
		if (address == null) {
			return false;
		}
		byte[] bytes = InetAddresses.toBytes(address);
		if (bytes.length != this.network.length) {
			return false;
		}
		InetAddresses.mask(bytes, this.prefixLength);
		return Arrays.equals(bytes, this.network);
	}

	/**
	 * Tells whether an IPv4 address, given as its 32 bits, is in this range: as
	 * {@link #contains(InetAddress)} of that address, without an {@link InetAddress}.
	 * @param bits the address, e.g. {@code 0x7f000001} for {@code 127.0.0.1}
	 * @return {@code true} if it is
	 */
	public boolean containsIpv4(int bits) {
		if (this.network.length != 4) {
			return false;
		}
		int network = ((this.network[0] & 0xff) << 24) | ((this.network[1] & 0xff) << 16)
				| ((this.network[2] & 0xff) << 8) | (this.network[3] & 0xff);
		int mask = (this.prefixLength == 0) ? 0 : (-1 << (32 - this.prefixLength));
		return (bits & mask) == network;
	}

	/**
	 * Returns the number of leading bits that an address must share with this range.
	 * @return 0-32 for IPv4, 0-128 for IPv6
	 */
	public int prefixLength() {
		return this.prefixLength;
	}

	/**
	 * Returns whether this is an IPv4 range.
	 * @return {@code true} for IPv4 (including ranges written as IPv4-mapped IPv6), {@code false}
	 * for IPv6
	 */
	boolean isIpv4() {
		return this.network.length == 4;
	}

	@Override
	public boolean equals(@Nullable Object obj) {
		return this == obj || (obj instanceof IpAddressRange other && this.prefixLength == other.prefixLength
				&& Arrays.equals(this.network, other.network));
	}

	@Override
	public int hashCode() {
		return 31 * Arrays.hashCode(this.network) + this.prefixLength;
	}

	/**
	 * Returns the canonical form: the network address (host bits cleared; IPv6 in RFC 5952 form),
	 * a slash and the prefix length, for example {@code "10.0.0.0/8"}, {@code "2001:db8::/32"} or
	 * {@code "192.168.1.7/32"}.
	 * @return the canonical CIDR text
	 */
	@Override
	public String toString() {
		return InetAddresses.format(this.network) + "/" + this.prefixLength;
	}

	private static IllegalArgumentException invalid(String cidr, String reason) {
		return new IllegalArgumentException("'" + cidr + "' is not a valid CIDR: " + reason);
	}

}
