package io.github.ratelimit.web.clientip;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link InetAddresses}.
 */
class InetAddressesTests {

	@ParameterizedTest
	@CsvSource({
		"1.2.3.4, 1.2.3.4",
		"0.0.0.0, 0.0.0.0",
		"255.255.255.255, 255.255.255.255",
		"'  10.0.0.1  ', 10.0.0.1",
		"10.20.30.40, 10.20.30.40",
	})
	void parsesIpv4(String text, String expected) {
		InetAddress address = InetAddresses.parse(text);
		assertThat(address).isInstanceOf(Inet4Address.class);
		assertThat(InetAddresses.format(address)).isEqualTo(expected);
	}

	@ParameterizedTest
	@CsvSource({
		"::1, ::1",
		"::0001, ::1",
		"0:0:0:0:0:0:0:1, ::1",
		"[::1], ::1",
		"::, ::",
		"2001:DB8::1, 2001:db8::1",
		"2001:0db8:0000:0000:0000:0000:0000:0001, 2001:db8::1",
		"2001:db8:0:0:1:0:0:1, 2001:db8::1:0:0:1",
		"2001:db8:0:1:1:1:1:1, 2001:db8:0:1:1:1:1:1",
		"2001:0:0:1:0:0:0:1, 2001:0:0:1::1",
		"1::, 1::",
		"1:2:3:4:5:6:7::, 1:2:3:4:5:6:7:0",
		"::2:3:4:5:6:7:8, 0:2:3:4:5:6:7:8",
		"fe80::1:2, fe80::1:2",
		"::1.2.3.4, ::102:304",
		"64:ff9b::192.0.2.33, 64:ff9b::c000:221",
		"ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255, ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
	})
	void parsesIpv6AndFormatsPerRfc5952(String text, String expected) {
		InetAddress address = InetAddresses.parse(text);
		assertThat(address).isInstanceOf(Inet6Address.class);
		assertThat(InetAddresses.format(address)).isEqualTo(expected);
	}

	@ParameterizedTest
	@ValueSource(strings = { "::ffff:1.2.3.4", "::FFFF:1.2.3.4", "0:0:0:0:0:ffff:1.2.3.4", "::ffff:102:304",
			"[::ffff:1.2.3.4]" })
	void ipv4MappedIpv6ComesBackAsIpv4(String text) {
		InetAddress address = InetAddresses.parse(text);
		assertThat(address).isInstanceOf(Inet4Address.class);
		assertThat(InetAddresses.format(address)).isEqualTo("1.2.3.4");
	}

	@Test
	void formatsIpv4MappedInet6AddressAsIpv4() throws Exception {
		byte[] bytes = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (byte) 0xff, (byte) 0xff, 10, 0, 0, 1 };
		// Inet6Address.getByAddress keeps the IPv6 type, unlike InetAddress.getByAddress.
		InetAddress address = Inet6Address.getByAddress(null, bytes, -1);
		assertThat(InetAddresses.format(address)).isEqualTo("10.0.0.1");
	}

	@Test
	void formatDropsZoneId() throws Exception {
		byte[] bytes = InetAddresses.parse("fe80::1").getAddress();
		InetAddress scoped = Inet6Address.getByAddress(null, bytes, 3);
		assertThat(InetAddresses.format(scoped)).isEqualTo("fe80::1");
	}

	@ParameterizedTest
	@ValueSource(strings = {
		// Java's lenient legacy IPv4 forms.
		"1.2.3", "127.1", "1", "2130706433", "0x7f.0.0.1", "0x7f000001", "0177.0.0.1",
		// Leading zeros: read as octal by inet_aton(), as decimal by others; refused as ambiguous.
		"01.2.3.4", "1.2.3.04", "00.0.0.0",
		// Malformed IPv4.
		"1.2.3.4.5", "999.1.1.1", "256.0.0.0", "1.2.3.-4", "+1.2.3.4", "1.2.3.+4", "1..2.3", ".1.2.3",
		"1.2.3.4.", "1.2.3.4 5", "1 .2.3.4", "1.2.3.4:80", "[1.2.3.4]", "1.2.3.a", "1.2.3.1000",
		// Non-ASCII digits (Arabic-Indic, fullwidth).
		"\u0661.2.3.4", "\uff11.2.3.4",
		// Host names: must not be resolved.
		"localhost", "example.com", "a", "ip6-localhost", "www.example.com.",
		// Malformed IPv6.
		":", ":::", "1::2::3", "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7", ":1::", "1::2:", ":1:2:3:4:5:6:7:8",
		"1:2:3:4:5:6:7:8:", "12345::", "g::1", "::1%eth0", "fe80::1%1", "[::1]:8080", "[::1", "::1]", "[]",
		"1:2:3:4:5:6:7:1.2.3.4", "1.2.3.4::", "::1.2.3.4:1", "::1.2.3", "::256.1.1.1", "::01.2.3.4",
		"1:2:3:4:5::6:1.2.3.4", "1:2:3:4:5:6:7:8::", "::1:2:3:4:5:6:7:8", "\uff21::1", "::\u0661",
		// What the JDK's own IPv6 parser would take: more than four digits in a group, non-ASCII hex
		// digits, a lenient or ambiguous IPv4 tail; and host names that it would look up.
		"00000::1", "::0000255", "::ffff:00000180", "1:\uff11::1", "::1.2.3.04", "::ffff:127.1", "::ffff:0x7f.0.0.1", "::ffff:1.2.3.4.5",
		"::localhost", "[localhost]", "[example.com]",
		// Empty and blank.
		"", " ", "\t",
		// Too long.
		"0000:0000:0000:0000:0000:0000:0000:0000:0000:0000",
		"0000:0000:0000:0000:0000:0000:0000:0000:0000:0000:0000:0000:0000:0000",
	})
	void rejectsWhatIsNotAStrictLiteral(String text) {
		assertThat(InetAddresses.parse(text)).isNull();
	}

	@Test
	void rejectsNull() {
		assertThat(InetAddresses.parse(null)).isNull();
	}

	@Test
	void rejectsHugeInputQuickly() {
		String huge = "1".repeat(1_000_000);
		assertThat(InetAddresses.parse(huge)).isNull();
		assertThat(InetAddresses.parse(":".repeat(1_000_000))).isNull();
	}

	@Test
	void acceptsMaximumLengthLiterals() {
		String longest = "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255";
		assertThat(longest).hasSize(45);
		assertThat(InetAddresses.parse(longest)).isNotNull();
		assertThat(InetAddresses.parse("[" + longest + "]")).isNotNull();
		assertThat(InetAddresses.parse(" [" + longest + "] ")).isNotNull();
	}

	@Test
	void toBytesReducesIpv4MappedToFourBytes() throws Exception {
		byte[] bytes = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (byte) 0xff, (byte) 0xff, 10, 0, 0, 1 };
		InetAddress mapped = Inet6Address.getByAddress(null, bytes, -1);
		assertThat(InetAddresses.toBytes(mapped)).containsExactly(10, 0, 0, 1);
		assertThat(InetAddresses.toBytes(InetAddresses.parse("::1"))).hasSize(16);
	}

	@ParameterizedTest
	@CsvSource({ "203.0.113.7:4711, 203.0.113.7", "'[2001:db8::1]:443', 2001:db8::1", "'[2001:db8::1]', 2001:db8::1",
			"fe80::20%eth0, fe80::20", "'[fe80::20%eth0]:80', fe80::20", "fe80::20%12, fe80::20",
			"2001:db8::1:443, 2001:db8::1:443", "' 203.0.113.7:80 ', 203.0.113.7", "::ffff:1.2.3.4, 1.2.3.4",
			"203.0.113.7, 203.0.113.7" })
	void hopsMayCarryPortsAndZones(String hop, String address) {
		assertThat(InetAddresses.format(InetAddresses.parseHop(hop))).isEqualTo(address);
	}

	@ParameterizedTest
	@ValueSource(strings = { "203.0.113.7:", "203.0.113.7:65536", "203.0.113.7:1:2", "[203.0.113.7]:80", "[::1]:",
			"[::1]:x", "[::1]80", "[::1", "fe80::1%", "fe80::1%a/b", "fe80::1%a%b", "1.2.3.4%eth0", "host:80",
			"[host]", "", " ", "[]", "[]:80", "127.1:80", "01.2.3.4:80" })
	void malformedHopsAreRefused(String hop) {
		assertThat(InetAddresses.parseHop(hop)).isNull();
	}

	@Test
	void hugeHopsAreRefusedQuickly() {
		assertThat(InetAddresses.parseHop(null)).isNull();
		assertThat(InetAddresses.parseHop("[::1]:" + "1".repeat(1_000_000))).isNull();
		assertThat(InetAddresses.parseHop("fe80::1%" + "a".repeat(InetAddresses.MAX_HOP_LENGTH))).isNull();
	}

	@Test
	void formatsNetworks() {
		assertThat(InetAddresses.formatNetwork(InetAddresses.parse("2001:db8:7:8:9::1"), 32, 64))
			.isEqualTo("2001:db8:7:8::/64");
		assertThat(InetAddresses.formatNetwork(InetAddresses.parse("2001:db8:7:8:9::1"), 32, 128))
			.isEqualTo("2001:db8:7:8:9::1");
		assertThat(InetAddresses.formatNetwork(InetAddresses.parse("203.0.113.7"), 24, 64)).isEqualTo("203.0.113.0/24");
		assertThat(InetAddresses.formatNetwork(InetAddresses.parse("::ffff:203.0.113.7"), 32, 64))
			.isEqualTo("203.0.113.7");
		assertThat(InetAddresses.formatNetwork(InetAddresses.parse("::1"), 32, 64)).isEqualTo("::/64");
	}

	@ParameterizedTest
	@ValueSource(strings = { "1.2.3.4", "0.0.0.0", "255.255.255.255", "127.0.0.1", "10.20.30.40", "203.0.113.7",
			"01.2.3.4", "1.2.3.04", "00.0.0.0", "256.1.1.1", "1.2.3.256", "1.2.3", "1.2.3.4.5", "1.2.3.4.", ".1.2.3.4",
			"1..2.3", " 1.2.3.4", "1.2.3.4 ", "1.2.3.4:80", "1.2.3.4/32", "1234.1.1.1", "1.2.3.+4", "::1",
			"::ffff:1.2.3.4", "[1.2.3.4]", "a.b.c.d", "1.2.3.4%eth0", "999.999.999.999", "0x1.2.3.4", "" })
	void aTextIsCanonicalIpv4ExactlyWhenItsAddressFormatsBackToIt(String text) {
		InetAddress parsed = InetAddresses.parseHop(text);
		boolean formatsBack = parsed instanceof Inet4Address && InetAddresses.format(parsed).equals(text);
		assertThat(InetAddresses.isCanonicalIpv4(text)).as(text).isEqualTo(formatsBack);
		long bits = InetAddresses.canonicalIpv4Bits(text);
		if (formatsBack) {
			byte[] bytes = parsed.getAddress();
			assertThat(bits).as(text).isEqualTo(((bytes[0] & 0xffL) << 24) | ((bytes[1] & 0xff) << 16)
					| ((bytes[2] & 0xff) << 8) | (bytes[3] & 0xff));
		}
		else {
			assertThat(bits).as(text).isEqualTo(-1);
		}
	}

	@Test
	void everyFourOctetsFormatBackToACanonicalText() {
		java.util.Random random = new java.util.Random(42);
		for (int i = 0; i < 10_000; i++) {
			byte[] bytes = new byte[4];
			random.nextBytes(bytes);
			String text = InetAddresses.format(bytes);
			assertThat(InetAddresses.isCanonicalIpv4(text)).as(text).isTrue();
			assertThat((int) InetAddresses.canonicalIpv4Bits(text)).as(text)
				.isEqualTo(java.nio.ByteBuffer.wrap(bytes).getInt());
			// A leading zero added to any octet is not canonical.
			String[] octets = text.split("\\.");
			int octet = random.nextInt(4);
			octets[octet] = "0" + octets[octet];
			assertThat(InetAddresses.isCanonicalIpv4(String.join(".", octets))).isFalse();
		}
	}

}
