package io.github.ratelimit.web.clientip;

import java.net.Inet6Address;
import java.net.InetAddress;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Tests for {@link IpAddressRange}.
 */
class IpAddressRangeTests {

	@ParameterizedTest
	@CsvSource({
		"10.0.0.0/8, 10.0.0.0/8",
		"'  10.0.0.0/8  ', 10.0.0.0/8",
		"192.168.1.7, 192.168.1.7/32",
		"10.1.2.3/8, 10.0.0.0/8",
		"172.16.0.0/12, 172.16.0.0/12",
		"172.31.255.255/12, 172.16.0.0/12",
		"0.0.0.0/0, 0.0.0.0/0",
		"1.2.3.4/0, 0.0.0.0/0",
		"2001:db8::/32, 2001:db8::/32",
		"2001:0DB8:0000::/32, 2001:db8::/32",
		"2001:db8:ffff::1/32, 2001:db8::/32",
		"::1, ::1/128",
		"[::1]/128, ::1/128",
		"::/0, ::/0",
		"fd00::/8, fd00::/8",
		"fd12:3456::/7, fc00::/7",
		"::ffff:10.0.0.0/104, 10.0.0.0/8",
		"::ffff:10.0.0.1, 10.0.0.1/32",
		"::ffff:0.0.0.0/96, 0.0.0.0/0",
		"10.0.0.0/08, 10.0.0.0/8",
	})
	void parsesToCanonicalForm(String cidr, String canonical) {
		IpAddressRange range = IpAddressRange.parse(cidr);
		assertThat(range).hasToString(canonical);
		assertThat(IpAddressRange.parse(range.toString())).isEqualTo(range).hasSameHashCodeAs(range);
	}

	@Test
	void exposesPrefixLengthAndFamily() {
		assertThat(IpAddressRange.parse("10.0.0.0/8").prefixLength()).isEqualTo(8);
		assertThat(IpAddressRange.parse("10.0.0.0/8").isIpv4()).isTrue();
		assertThat(IpAddressRange.parse("10.0.0.1").prefixLength()).isEqualTo(32);
		assertThat(IpAddressRange.parse("::1").prefixLength()).isEqualTo(128);
		assertThat(IpAddressRange.parse("::1").isIpv4()).isFalse();
		assertThat(IpAddressRange.parse("::ffff:10.0.0.0/104").isIpv4()).isTrue();
	}

	@Test
	void equalityIgnoresHostBits() {
		assertThat(IpAddressRange.parse("10.1.2.3/8")).isEqualTo(IpAddressRange.parse("10.0.0.0/8"));
		assertThat(IpAddressRange.parse("10.0.0.0/8")).isNotEqualTo(IpAddressRange.parse("10.0.0.0/9"));
		assertThat(IpAddressRange.parse("0.0.0.0/0")).isNotEqualTo(IpAddressRange.parse("::/0"));
	}

	@Test
	void containsIpv4Boundaries() {
		IpAddressRange range = IpAddressRange.parse("192.168.4.0/22");
		assertThat(range.contains(address("192.168.3.255"))).isFalse();
		assertThat(range.contains(address("192.168.4.0"))).isTrue();
		assertThat(range.contains(address("192.168.5.17"))).isTrue();
		assertThat(range.contains(address("192.168.7.255"))).isTrue();
		assertThat(range.contains(address("192.168.8.0"))).isFalse();
	}

	@Test
	void containsWithPrefixOnByteBoundary() {
		IpAddressRange range = IpAddressRange.parse("10.0.0.0/8");
		assertThat(range.contains(address("9.255.255.255"))).isFalse();
		assertThat(range.contains(address("10.0.0.0"))).isTrue();
		assertThat(range.contains(address("10.255.255.255"))).isTrue();
		assertThat(range.contains(address("11.0.0.0"))).isFalse();
	}

	@Test
	void singleAddressContainsOnlyItself() {
		IpAddressRange range = IpAddressRange.parse("192.168.1.7");
		assertThat(range.contains(address("192.168.1.7"))).isTrue();
		assertThat(range.contains(address("192.168.1.6"))).isFalse();
		assertThat(range.contains(address("192.168.1.8"))).isFalse();
		IpAddressRange loopback6 = IpAddressRange.parse("::1");
		assertThat(loopback6.contains(address("0:0:0:0:0:0:0:1"))).isTrue();
		assertThat(loopback6.contains(address("::2"))).isFalse();
		assertThat(loopback6.contains(address("127.0.0.1"))).isFalse();
	}

	@Test
	void containsIpv6Boundaries() {
		IpAddressRange range = IpAddressRange.parse("2001:db8::/32");
		assertThat(range.contains(address("2001:db7:ffff:ffff:ffff:ffff:ffff:ffff"))).isFalse();
		assertThat(range.contains(address("2001:db8::"))).isTrue();
		assertThat(range.contains(address("2001:db8:ffff:ffff:ffff:ffff:ffff:ffff"))).isTrue();
		assertThat(range.contains(address("2001:db9::"))).isFalse();
		IpAddressRange uniqueLocal = IpAddressRange.parse("fc00::/7");
		assertThat(uniqueLocal.contains(address("fbff:ffff::1"))).isFalse();
		assertThat(uniqueLocal.contains(address("fc00::1"))).isTrue();
		assertThat(uniqueLocal.contains(address("fdff:ffff::1"))).isTrue();
		assertThat(uniqueLocal.contains(address("fe00::"))).isFalse();
	}

	@Test
	void zeroPrefixContainsItsWholeFamilyOnly() {
		IpAddressRange allIpv4 = IpAddressRange.parse("0.0.0.0/0");
		assertThat(allIpv4.contains(address("0.0.0.0"))).isTrue();
		assertThat(allIpv4.contains(address("255.255.255.255"))).isTrue();
		assertThat(allIpv4.contains(address("::ffff:8.8.8.8"))).isTrue();
		assertThat(allIpv4.contains(address("::1"))).isFalse();
		IpAddressRange allIpv6 = IpAddressRange.parse("::/0");
		assertThat(allIpv6.contains(address("::"))).isTrue();
		assertThat(allIpv6.contains(address("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"))).isTrue();
		// IPv4-mapped addresses are IPv4, so not in an IPv6 range.
		assertThat(allIpv6.contains(address("::ffff:8.8.8.8"))).isFalse();
		assertThat(allIpv6.contains(address("8.8.8.8"))).isFalse();
	}

	@Test
	void ipv4MappedAddressesCountAsIpv4() throws Exception {
		IpAddressRange range = IpAddressRange.parse("10.0.0.0/8");
		byte[] bytes = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (byte) 0xff, (byte) 0xff, 10, 1, 2, 3 };
		// An Inet6Address that still holds the mapped form, as some stacks hand out.
		assertThat(range.contains(Inet6Address.getByAddress(null, bytes, -1))).isTrue();
		bytes[12] = 11;
		assertThat(range.contains(Inet6Address.getByAddress(null, bytes, -1))).isFalse();
		IpAddressRange mappedRange = IpAddressRange.parse("::ffff:10.0.0.0/104");
		assertThat(mappedRange.contains(address("10.200.0.1"))).isTrue();
		assertThat(mappedRange.contains(address("11.0.0.1"))).isFalse();
	}

	@Test
	void doesNotContainNull() {
		assertThat(IpAddressRange.parse("0.0.0.0/0").contains(null)).isFalse();
	}

	@Test
	void rejectsPrefixTooLongForIpv4() {
		assertThatIllegalArgumentException().isThrownBy(() -> IpAddressRange.parse("10.0.0.0/33"))
			.withMessage("'10.0.0.0/33' is not a valid CIDR: prefix length must be between 0 and 32 for IPv4");
	}

	@Test
	void rejectsPrefixTooLongForIpv6() {
		assertThatIllegalArgumentException().isThrownBy(() -> IpAddressRange.parse("2001:db8::/129"))
			.withMessage("'2001:db8::/129' is not a valid CIDR: prefix length must be between 0 and 128 for IPv6");
		assertThatIllegalArgumentException().isThrownBy(() -> IpAddressRange.parse("::/99999999999"))
			.withMessage("'::/99999999999' is not a valid CIDR: prefix length must be between 0 and 128 for IPv6");
	}

	@Test
	void rejectsIpv4MappedPrefixOutOfRange() {
		assertThatIllegalArgumentException().isThrownBy(() -> IpAddressRange.parse("::ffff:10.0.0.0/8"))
			.withMessage("'::ffff:10.0.0.0/8' is not a valid CIDR: "
					+ "prefix length must be between 96 and 128 for an IPv4-mapped IPv6 address");
	}

	@Test
	void rejectsNonNumericPrefix() {
		assertThatIllegalArgumentException().isThrownBy(() -> IpAddressRange.parse("10.0.0.0/abc"))
			.withMessage("'10.0.0.0/abc' is not a valid CIDR: prefix length 'abc' is not a decimal number");
		assertThatIllegalArgumentException().isThrownBy(() -> IpAddressRange.parse("10.0.0.0/-1"))
			.withMessageStartingWith("'10.0.0.0/-1' is not a valid CIDR: prefix length '-1'");
		assertThatIllegalArgumentException().isThrownBy(() -> IpAddressRange.parse("10.0.0.0/+8"))
			.withMessageStartingWith("'10.0.0.0/+8' is not a valid CIDR: prefix length '+8'");
	}

	@Test
	void rejectsMissingParts() {
		assertThatIllegalArgumentException().isThrownBy(() -> IpAddressRange.parse("10.0.0.0/"))
			.withMessage("'10.0.0.0/' is not a valid CIDR: the prefix length after '/' is missing");
		assertThatIllegalArgumentException().isThrownBy(() -> IpAddressRange.parse("/8"))
			.withMessage("'/8' is not a valid CIDR: the address before '/' is missing");
		assertThatIllegalArgumentException().isThrownBy(() -> IpAddressRange.parse(""))
			.withMessage("'' is not a valid CIDR: it is empty");
		assertThatIllegalArgumentException().isThrownBy(() -> IpAddressRange.parse("   "))
			.withMessage("'   ' is not a valid CIDR: it is empty");
	}

	@Test
	void rejectsSeveralSlashes() {
		assertThatIllegalArgumentException().isThrownBy(() -> IpAddressRange.parse("10.0.0.0/8/16"))
			.withMessage("'10.0.0.0/8/16' is not a valid CIDR: it contains more than one '/'");
	}

	@Test
	void rejectsHostNamesAndLenientForms() {
		for (String cidr : new String[] { "localhost", "example.com/24", "127.1", "1.2.3/24", "0x7f.0.0.1/8",
				"999.1.1.1/8", "1.2.3.4.5", "fe80::1%eth0/64", "10.0.0.0 8" }) {
			String address = cidr.contains("/") ? cidr.substring(0, cidr.indexOf('/')) : cidr;
			assertThatIllegalArgumentException().isThrownBy(() -> IpAddressRange.parse(cidr))
				.withMessageStartingWith("'" + cidr + "' is not a valid CIDR: '" + address
						+ "' is not an IPv4 or IPv6 address literal");
		}
	}

	private static InetAddress address(String text) {
		InetAddress address = InetAddresses.parse(text);
		assertThat(address).as(text).isNotNull();
		return address;
	}

}
