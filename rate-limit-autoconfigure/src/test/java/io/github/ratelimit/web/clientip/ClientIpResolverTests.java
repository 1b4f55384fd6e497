package io.github.ratelimit.web.clientip;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import org.junit.jupiter.api.Test;

import org.springframework.http.HttpHeaders;
import org.springframework.mock.web.MockHttpServletRequest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import io.github.ratelimit.web.key.KeyResolvers;
import io.github.ratelimit.web.policy.RateLimitExemptions;
import io.github.ratelimit.web.policy.TestPolicies;
import io.github.ratelimit.web.servlet.ServletRequestView;

/**
 * Tests for {@link ClientIpResolver}.
 */
class ClientIpResolverTests {

	/** Keys each address, so that these tests see addresses; networks are tested below. */
	private static final ClientIpResolver UNTRUSTING = ClientIpResolver.builder().ipv6Prefix(128).build();

	private static final ClientIpResolver TRUSTING_PRIVATE = resolver("10.0.0.0/8", "192.168.0.0/16", "fd00::/8");

	@Test
	void withoutTrustedProxiesIgnoresForwardedFor() {
		MockHttpServletRequest request = request("203.0.113.9", "198.51.100.1");
		assertThat(ServletClientIps.resolve(UNTRUSTING, request)).isEqualTo("203.0.113.9");
	}

	@Test
	void withoutTrustedProxiesIgnoresForwardedForEvenFromPrivateAddress() {
		MockHttpServletRequest request = request("10.0.0.1", "198.51.100.1");
		assertThat(ServletClientIps.resolve(UNTRUSTING, request)).isEqualTo("10.0.0.1");
	}

	@Test
	void untrustedRemoteWithSpoofedForwardedForIsIgnored() {
		MockHttpServletRequest request = request("203.0.113.9", "10.0.0.5, 198.51.100.1");
		assertThat(ServletClientIps.resolve(TRUSTING_PRIVATE, request)).isEqualTo("203.0.113.9");
	}

	@Test
	void trustedRemoteWithoutForwardedForIsTheClient() {
		MockHttpServletRequest request = request("10.0.0.1");
		assertThat(ServletClientIps.resolve(TRUSTING_PRIVATE, request)).isEqualTo("10.0.0.1");
	}

	@Test
	void trustedProxyWithSingleHop() {
		MockHttpServletRequest request = request("10.0.0.1", "198.51.100.7");
		assertThat(ServletClientIps.resolve(TRUSTING_PRIVATE, request)).isEqualTo("198.51.100.7");
	}

	@Test
	void trustedProxyChainWithSeveralHops() {
		MockHttpServletRequest request = request("10.0.0.1", "198.51.100.7, 203.0.113.4, 192.168.1.1, 10.2.3.4");
		// 10.2.3.4 and 192.168.1.1 are trusted; 203.0.113.4 is the first one that is not.
		assertThat(ServletClientIps.resolve(TRUSTING_PRIVATE, request)).isEqualTo("203.0.113.4");
	}

	@Test
	void multipleHeaderInstancesFormOneList() {
		MockHttpServletRequest request = request("10.0.0.1", "198.51.100.7, 203.0.113.4", "192.168.1.1",
				"10.9.9.9 ,10.8.8.8");
		assertThat(ServletClientIps.resolve(TRUSTING_PRIVATE, request)).isEqualTo("203.0.113.4");
	}

	@Test
	void multipleHeaderInstancesAreWalkedFromTheLastOne() {
		MockHttpServletRequest request = request("10.0.0.1", "198.51.100.7", "10.0.0.2", "203.0.113.4", "10.0.0.3");
		assertThat(ServletClientIps.resolve(TRUSTING_PRIVATE, request)).isEqualTo("203.0.113.4");
	}

	@Test
	void allHopsTrustedGivesLeftMost() {
		MockHttpServletRequest request = request("10.0.0.1", "192.168.0.9, 10.1.1.1", "10.2.2.2");
		assertThat(ServletClientIps.resolve(TRUSTING_PRIVATE, request)).isEqualTo("192.168.0.9");
	}

	@Test
	void malformedHopEndsTheWalk() {
		MockHttpServletRequest request = request("10.0.0.1", "198.51.100.7, garbage, 10.2.2.2, 10.3.3.3");
		// Whatever lies left of the garbage cannot be attributed to a trusted proxy.
		assertThat(ServletClientIps.resolve(TRUSTING_PRIVATE, request)).isEqualTo("10.2.2.2");
	}

	@Test
	void malformedRightMostHopGivesRemoteAddress() {
		assertThat(ServletClientIps.resolve(TRUSTING_PRIVATE, request("10.0.0.1", "198.51.100.7, unknown"))).isEqualTo("10.0.0.1");
		assertThat(ServletClientIps.resolve(TRUSTING_PRIVATE, request("10.0.0.1", "198.51.100.7, 127.1"))).isEqualTo("10.0.0.1");
		assertThat(ServletClientIps.resolve(TRUSTING_PRIVATE, request("10.0.0.1", "198.51.100.7, 1.2.3.4:")))
			.isEqualTo("10.0.0.1");
		assertThat(ServletClientIps.resolve(TRUSTING_PRIVATE, request("10.0.0.1", "198.51.100.7, 1.2.3.4:65536")))
			.isEqualTo("10.0.0.1");
	}

	@Test
	void emptyHopEndsTheWalk() {
		assertThat(ServletClientIps.resolve(TRUSTING_PRIVATE, request("10.0.0.1", "198.51.100.7,,10.2.2.2"))).isEqualTo("10.2.2.2");
		assertThat(ServletClientIps.resolve(TRUSTING_PRIVATE, request("10.0.0.1", "198.51.100.7, "))).isEqualTo("10.0.0.1");
		assertThat(ServletClientIps.resolve(TRUSTING_PRIVATE, request("10.0.0.1", ""))).isEqualTo("10.0.0.1");
		assertThat(ServletClientIps.resolve(TRUSTING_PRIVATE, request("10.0.0.1", ","))).isEqualTo("10.0.0.1");
		assertThat(ServletClientIps.resolve(TRUSTING_PRIVATE, request("10.0.0.1", ", 198.51.100.7"))).isEqualTo("198.51.100.7");
	}

	@Test
	void malformedHopBetweenHeaderInstancesEndsTheWalk() {
		MockHttpServletRequest request = request("10.0.0.1", "198.51.100.7", "nonsense", "10.2.2.2");
		assertThat(ServletClientIps.resolve(TRUSTING_PRIVATE, request)).isEqualTo("10.2.2.2");
	}

	@Test
	void spoofedLeftMostEntryIsNotBelieved() {
		// The client sent "X-Forwarded-For: 1.1.1.1"; the trusted proxy appended the real client.
		MockHttpServletRequest request = request("10.0.0.1", "1.1.1.1, 198.51.100.7");
		assertThat(ServletClientIps.resolve(TRUSTING_PRIVATE, request)).isEqualTo("198.51.100.7");
	}

	@Test
	void spoofedTrustedLookingEntryIsNotBelievedBeyondRealClient() {
		// The client pretends to be behind a trusted proxy: the walk stops at the real client first.
		MockHttpServletRequest request = request("10.0.0.1", "10.6.6.6, 198.51.100.7");
		assertThat(ServletClientIps.resolve(TRUSTING_PRIVATE, request)).isEqualTo("198.51.100.7");
	}

	@Test
	void trustedIpv6ProxyWithIpv6Client() {
		MockHttpServletRequest request = request("fd00::1", "2001:DB8:0:0:0:0:0:42, fd12::7");
		assertThat(ServletClientIps.resolve(TRUSTING_PRIVATE, request)).isEqualTo("2001:db8::42");
	}

	@Test
	void ipv6RemoteOutsideTrustedRangeIsTheClient() {
		MockHttpServletRequest request = request("fe00::1", "2001:db8::42");
		assertThat(ServletClientIps.resolve(TRUSTING_PRIVATE, request)).isEqualTo("fe00::1");
	}

	@Test
	void ipv6IsNormalised() {
		assertThat(ServletClientIps.resolve(UNTRUSTING, request("0:0:0:0:0:0:0:1"))).isEqualTo("::1");
		assertThat(ServletClientIps.resolve(UNTRUSTING, request("::0001"))).isEqualTo("::1");
		assertThat(ServletClientIps.resolve(UNTRUSTING, request("[::1]"))).isEqualTo("::1");
		assertThat(ServletClientIps.resolve(UNTRUSTING, request("2001:0DB8:0000:0000:0000:0000:0000:0001"))).isEqualTo("2001:db8::1");
		assertThat(ServletClientIps.resolve(TRUSTING_PRIVATE, request("10.0.0.1", "[2001:db8::0001]"))).isEqualTo("2001:db8::1");
	}

	@Test
	void ipv4MappedIsNormalisedToIpv4() {
		assertThat(ServletClientIps.resolve(UNTRUSTING, request("::ffff:1.2.3.4"))).isEqualTo("1.2.3.4");
		assertThat(ServletClientIps.resolve(UNTRUSTING, request("0:0:0:0:0:ffff:102:304"))).isEqualTo("1.2.3.4");
	}

	@Test
	void ipv4MappedRemoteMatchesIpv4TrustedRange() {
		MockHttpServletRequest request = request("::ffff:10.0.0.1", "::ffff:198.51.100.7");
		assertThat(ServletClientIps.resolve(TRUSTING_PRIVATE, request)).isEqualTo("198.51.100.7");
	}

	@Test
	void ipv4ProxyForwardingForIpv6Client() {
		MockHttpServletRequest request = request("10.0.0.1", "2001:db8::1");
		assertThat(ServletClientIps.resolve(TRUSTING_PRIVATE, request)).isEqualTo("2001:db8::1");
	}

	@Test
	void unparsableRemoteAddressIsReturnedTrimmedAndTruncated() {
		assertThat(ServletClientIps.resolve(UNTRUSTING, request(" /var/run/app.sock "))).isEqualTo("/var/run/app.sock");
		String longRemote = "x".repeat(200);
		assertThat(ServletClientIps.resolve(TRUSTING_PRIVATE, request(longRemote, "198.51.100.7"))).isEqualTo("x".repeat(64));
	}

	@Test
	void missingRemoteAddressIsUnknown() {
		assertThat(ServletClientIps.resolve(UNTRUSTING, request(null))).isEqualTo("unknown");
		assertThat(ServletClientIps.resolve(UNTRUSTING, request(""))).isEqualTo("unknown");
		assertThat(ServletClientIps.resolve(TRUSTING_PRIVATE, request("  ", "198.51.100.7"))).isEqualTo("unknown");
	}

	@Test
	void hostNameInForwardedForIsMalformed() {
		MockHttpServletRequest request = request("10.0.0.1", "localhost");
		assertThat(ServletClientIps.resolve(TRUSTING_PRIVATE, request)).isEqualTo("10.0.0.1");
		request = request("10.0.0.1", "198.51.100.7, example.com, 10.1.1.1");
		assertThat(ServletClientIps.resolve(TRUSTING_PRIVATE, request)).isEqualTo("10.1.1.1");
	}

	@Test
	void trustEverythingStillStopsAtLeftMostValid() {
		ClientIpResolver resolver = resolver("0.0.0.0/0", "::/0");
		assertThat(ServletClientIps.resolve(resolver, request("203.0.113.9", "1.1.1.1, 2.2.2.2"))).isEqualTo("1.1.1.1");
	}

	@Test
	void hugeHeaderWithManyHopsFindsTheClient() {
		// 9,999 spoofed entries, then the real client appended by the trusted proxy.
		String spoofed = IntStream.range(0, 9_999)
			.mapToObj((i) -> "10." + (i / 65536 % 256) + "." + (i / 256 % 256) + "." + (i % 256))
			.collect(Collectors.joining(", "));
		MockHttpServletRequest request = request("10.0.0.1", spoofed + ", 198.51.100.7");
		String client = ServletClientIps.resolve(TRUSTING_PRIVATE, request);
		assertThat(client).isEqualTo("198.51.100.7");
	}

	@Test
	void hugeHeaderOfTrustedHopsStopsAfterMaxHops() {
		List<String> hops = new ArrayList<>();
		for (int i = 0; i < 10_000; i++) {
			hops.add("10.0." + (i / 256) + "." + (i % 256));
		}
		MockHttpServletRequest request = request("10.0.0.1", String.join(",", hops));
		String client = ServletClientIps.resolve(TRUSTING_PRIVATE, request);
		// Only the right-most 64 are considered; the left-most of those wins.
		assertThat(client).isEqualTo(hops.get(10_000 - ClientIpResolver.MAX_HOPS));
	}

	@Test
	void manyHeaderInstancesAreBounded() {
		String[] values = new String[10_000];
		for (int i = 0; i < values.length; i++) {
			values[i] = "10.1." + (i / 256) + "." + (i % 256);
		}
		values[0] = "198.51.100.7";
		MockHttpServletRequest request = request("10.0.0.1", values);
		String client = ServletClientIps.resolve(TRUSTING_PRIVATE, request);
		assertThat(client).isEqualTo(values[values.length - ClientIpResolver.MAX_HOPS]);
	}

	@Test
	void hostileHeaderContentNeverThrows() {
		List<String> hostile = Arrays.asList(",".repeat(100_000), " ".repeat(100_000), "1".repeat(100_000),
				":".repeat(100_000), "[".repeat(1_000), "\u0000\u0001\uffff", "\u00e9\u4e2d\ud83d\ude00", "%00",
				"1.2.3.4\r\n", "::1%eth0", "0x7f.0.0.1", "[::1]:80", "\ud800", "1.2.3.4" + " ".repeat(100_000),
				"[::1]:" + "9".repeat(100_000), "::1%" + "e".repeat(100_000), "[" + "1:".repeat(50_000) + "]:80",
				"1.2.3.4:" + ":".repeat(1000));
		for (String value : hostile) {
			MockHttpServletRequest request = request("10.0.0.1", value);
			String client = ServletClientIps.resolve(TRUSTING_PRIVATE, request);
			assertThat(client).as(value.substring(0, Math.min(20, value.length()))).isIn("10.0.0.1", "1.2.3.4", "::1");
		}
	}

	@Test
	void whitespaceAroundHopsIsTrimmed() {
		MockHttpServletRequest request = request("10.0.0.1", "  198.51.100.7  ,\t10.1.1.1 ");
		assertThat(ServletClientIps.resolve(TRUSTING_PRIVATE, request)).isEqualTo("198.51.100.7");
	}

	@Test
	void isTrusted() {
		assertThat(TRUSTING_PRIVATE.isTrusted(InetAddresses.parse("10.255.0.1"))).isTrue();
		assertThat(TRUSTING_PRIVATE.isTrusted(InetAddresses.parse("fd00::9"))).isTrue();
		assertThat(TRUSTING_PRIVATE.isTrusted(InetAddresses.parse("::ffff:192.168.3.3"))).isTrue();
		assertThat(TRUSTING_PRIVATE.isTrusted(InetAddresses.parse("11.0.0.1"))).isFalse();
		assertThat(UNTRUSTING.isTrusted(InetAddresses.parse("10.0.0.1"))).isFalse();
	}

	@Test
	void trustedProxiesAreCopied() {
		List<IpAddressRange> ranges = new ArrayList<>(List.of(IpAddressRange.parse("10.0.0.0/8")));
		ClientIpResolver resolver = ClientIpResolver.builder().trustedProxies(ranges).build();
		ranges.clear();
		assertThat(resolver.trustedProxies).containsExactly(IpAddressRange.parse("10.0.0.0/8"));
	}

	@Test
	void rejectsNullRanges() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> ClientIpResolver.builder().trustedProxies(Arrays.asList((IpAddressRange) null)));
	}

	@Test
	void theCoreTakesThePeerAndAHeaderLookupForAnyWebStack() {
		Map<String, List<String>> headers = Map.of("X-Forwarded-For", List.of("6.6.6.6, 198.51.100.7", "10.2.3.4"));
		assertThat(TRUSTING_PRIVATE.resolve("10.0.0.1", headers::get)).isEqualTo("198.51.100.7");
		assertThat(TRUSTING_PRIVATE.resolveAddress(InetAddresses.parse("10.0.0.1"), headers::get))
			.isEqualTo(InetAddresses.parse("198.51.100.7"));
		assertThat(TRUSTING_PRIVATE.resolveAddress("[fd00::1]:443", headers::get))
			.isEqualTo(InetAddresses.parse("198.51.100.7"));
		// As WebFlux has them: names without case.
		HttpHeaders http = new HttpHeaders();
		http.add("x-forwarded-for", "198.51.100.8");
		assertThat(TRUSTING_PRIVATE.resolve("10.0.0.1", http::get)).isEqualTo("198.51.100.8");
		// An untrusted peer's headers are not even looked up.
		assertThat(TRUSTING_PRIVATE.resolve("203.0.113.9", (name) -> {
			throw new AssertionError(name);
		})).isEqualTo("203.0.113.9");
		assertThat(TRUSTING_PRIVATE.resolve("10.0.0.1", (name) -> null)).isEqualTo("10.0.0.1");
		assertThat(TRUSTING_PRIVATE.resolve("10.0.0.1", (name) -> Collections.singletonList(null))).isEqualTo("10.0.0.1");
		assertThat(TRUSTING_PRIVATE.resolve(null, headers::get)).isEqualTo("unknown");
		assertThat(TRUSTING_PRIVATE.resolve(" /var/run/app.sock ", headers::get)).isEqualTo("/var/run/app.sock");
		assertThat(TRUSTING_PRIVATE.resolveAddress((InetAddress) null, headers::get)).isNull();
		// Only the last MAX_HOPS values are read, however many the lookup gives.
		List<String> many = new ArrayList<>(Collections.nCopies(10_000, "10.1.1.1"));
		many.set(0, "198.51.100.7");
		many.set(many.size() - ClientIpResolver.MAX_HOPS, "10.7.7.7");
		assertThat(TRUSTING_PRIVATE.resolve("10.0.0.1", (name) -> many)).isEqualTo("10.7.7.7");
	}

	@Test
	void theForwardingHeaderIsReadAndWalkedOncePerRequestWhoeverAsks() {
		AtomicInteger reads = new AtomicInteger();
		MockHttpServletRequest request = new MockHttpServletRequest() {
			@Override
			public Enumeration<String> getHeaders(String name) {
				if (name.equalsIgnoreCase("X-Forwarded-For")) {
					reads.incrementAndGet();
				}
				return super.getHeaders(name);
			}
		};
		request.setRemoteAddr("10.0.0.1");
		request.addHeader("X-Forwarded-For", "6.6.6.6, 203.0.113.4, 10.2.3.4");
		KeyResolvers keyResolvers = new KeyResolvers(TRUSTING_PRIVATE, null);
		// What the filter asks for a request: its exemption by IP, then its key (and a SpEL key, a fallback).
		RateLimitExemptions exemptions = TestPolicies.exemptions(List.of(IpAddressRange.parse("192.0.2.0/24")), null,
				keyResolvers);
		ServletRequestView view = new ServletRequestView(request, TRUSTING_PRIVATE);
		assertThat(exemptions.isExempt(view)).isFalse();
		assertThat(keyResolvers.forSpec("ip", "test").read(view)).isEqualTo("ip:203.0.113.4");
		assertThat(keyResolvers.forSpec("#{ip}", "test").read(new ServletRequestView(new HttpServletRequestWrapper(request),
				TRUSTING_PRIVATE))).endsWith("203.0.113.4");
		assertThat(keyResolvers.forSpec("header:X-Api-Key", "test").read(view)).isEqualTo("ip:203.0.113.4");
		assertThat(ServletClientIps.resolveAddress(TRUSTING_PRIVATE, request)).isEqualTo(InetAddresses.parse("203.0.113.4"));
		assertThat(reads).hasValue(1);
		// Another resolver (another application, other proxies) walks it again, for itself.
		assertThat(ServletClientIps.resolve(resolver("10.0.0.0/8", "203.0.113.0/24"), request)).isEqualTo("6.6.6.6");
		assertThat(reads).hasValue(2);
	}

	@Test
	void aWrapperThatRewritesTheHeaderOrAttributesCannotPoisonTheWalkKeptForTheRequest() {
		MockHttpServletRequest request = request("10.0.0.1", "6.6.6.6, 198.51.100.7");
		String walk = ClientIpResolver.class.getName() + ".WALK";
		HttpServletRequest rewriting = new HttpServletRequestWrapper(request) {
			@Override
			public String getHeader(String name) {
				return "5.5.5.5";
			}

			@Override
			public Enumeration<String> getHeaders(String name) {
				return Collections.enumeration(List.of("5.5.5.5"));
			}

			@Override
			public String getRemoteAddr() {
				return "10.9.9.9";
			}

			@Override
			public Object getAttribute(String name) {
				return name.equals(walk) ? "5.5.5.5" : super.getAttribute(name);
			}

			@Override
			public void setAttribute(String name, Object value) {
				// Keeps nothing.
			}
		};
		assertThat(ServletClientIps.resolve(TRUSTING_PRIVATE, rewriting)).as("first through the wrapper").isEqualTo("198.51.100.7");
		assertThat(ServletClientIps.resolve(TRUSTING_PRIVATE, request)).isEqualTo("198.51.100.7");
		assertThat(ServletClientIps.resolve(TRUSTING_PRIVATE, new HttpServletRequestWrapper(rewriting))).isEqualTo("198.51.100.7");
		MockHttpServletRequest forged = request("10.0.0.1", "198.51.100.7");
		forged.setAttribute(walk, "5.5.5.5");
		assertThat(ServletClientIps.resolve(TRUSTING_PRIVATE, forged)).as("not a walk of ours").isEqualTo("198.51.100.7");
		// What a container integration records afterwards is walked anew.
		forged.setAttribute(ClientIpResolver.FORWARDING_HEADER_ATTRIBUTE, List.of("198.51.100.9"));
		assertThat(ServletClientIps.resolve(TRUSTING_PRIVATE, forged)).isEqualTo("198.51.100.9");
	}

	private static ClientIpResolver resolver(String... cidrs) {
		return ClientIpResolver.builder()
			.trustedProxies(Arrays.stream(cidrs).map(IpAddressRange::parse).toList())
			.ipv6Prefix(128)
			.build();
	}

	private static MockHttpServletRequest request(String remoteAddr, String... forwardedFor) {
		MockHttpServletRequest request = new MockHttpServletRequest();
		request.setRemoteAddr(remoteAddr);
		for (String value : forwardedFor) {
			request.addHeader("X-Forwarded-For", value);
		}
		return request;
	}

}
