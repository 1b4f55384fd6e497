package io.github.ratelimit.web.clientip;

import java.io.IOException;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.mock.web.MockFilterChain;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;
import org.springframework.web.filter.ForwardedHeaderFilter;

import io.github.ratelimit.web.ClientIpSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Tests for {@link ClientIpResolver}: hop syntax, the {@code Forwarded} and single-address headers,
 * network keys, and what the container or Spring did to the request before the limiter saw it.
 */
class ClientIpHeadersAndNetworksTests {

	private static final List<IpAddressRange> PRIVATE = List.of(IpAddressRange.parse("10.0.0.0/8"),
			IpAddressRange.parse("fd00::/8"));

	private static final ClientIpResolver XFF = ClientIpResolver.builder().trustedProxies(PRIVATE).ipv6Prefix(128).build();

	private static final ClientIpResolver FORWARDED = ClientIpResolver.builder()
		.trustedProxies(PRIVATE)
		.header("Forwarded")
		.ipv6Prefix(128)
		.build();

	private static final ClientIpResolver REAL_IP = ClientIpResolver.builder()
		.trustedProxies(PRIVATE)
		.header("X-Real-IP")
		.ipv6Prefix(128)
		.build();

	// Hop syntax

	@ParameterizedTest
	@CsvSource(delimiter = '|', value = { "198.51.100.20:1234 | 198.51.100.20", "198.51.100.20:0 | 198.51.100.20",
			"198.51.100.20:65535 | 198.51.100.20", "[2001:db8::20]:443 | 2001:db8::20", "[2001:db8::20] | 2001:db8::20",
			"fe80::20%eth0 | fe80::20", "[fe80::20%eth0]:8080 | fe80::20", "fe80::20%25 | fe80::20",
			"2001:db8::1:443 | 2001:db8::1:443", "[::ffff:198.51.100.20]:80 | 198.51.100.20" })
	void hopsWithPortsBracketsAndZonesAreThatAddress(String hop, String client) {
		assertThat(ServletClientIps.resolve(XFF, request("10.0.0.1", "X-Forwarded-For", hop))).isEqualTo(client);
	}

	@ParameterizedTest
	@ValueSource(strings = { "198.51.100.20:", "198.51.100.20:65536", "198.51.100.20:-1", "198.51.100.20:+80",
			"198.51.100.20:123456", "198.51.100.20:8o", "[198.51.100.20]:80", "[2001:db8::20]:", "[2001:db8::20]x",
			"[2001:db8::20", "2001:db8::20]", "fe80::20%", "fe80::20%et/h0", "fe80::20%eth 0", "198.51.100.20%eth0",
			"localhost:80", "[localhost]:80", "[]:80", ":80", "fe80:20" })
	void malformedHopsEndTheWalk(String hop) {
		assertThat(ServletClientIps.resolve(XFF, request("10.0.0.1", "X-Forwarded-For", "203.0.113.9, " + hop))).isEqualTo("10.0.0.1");
	}

	// Forwarded (RFC 7239)

	@ParameterizedTest
	@CsvSource(delimiter = '|', value = { "for=198.51.100.7 | 198.51.100.7",
			"for=\"[2001:db8:cafe::17]:4711\" | 2001:db8:cafe::17", "for=\"198.51.100.7:4711\" | 198.51.100.7",
			"For=198.51.100.7;Proto=https;By=10.0.0.1 | 198.51.100.7", "proto=https;for=198.51.100.7 | 198.51.100.7",
			"for=198.51.100.7 ; proto=https | 198.51.100.7", "for=\"198.51.100.7:_hidden-port\" | 198.51.100.7",
			"for=\"[2001:db8::7]\" | 2001:db8::7", "for=[2001:db8::7] | 2001:db8::7",
			"for=\"\\198.51.100.7\" | 198.51.100.7",
			"for=6.6.6.6, for=198.51.100.7, for=10.0.0.9 | 198.51.100.7",
			"for=6.6.6.6,for=198.51.100.7;proto=http,,for=10.0.0.9 | 198.51.100.7",
			"for=6.6.6.6, for=\"[fd00::3]:80\" | 6.6.6.6" })
	void forwardedForIsWalkedFromTheRight(String forwarded, String client) {
		assertThat(ServletClientIps.resolve(FORWARDED, request("10.0.0.1", "Forwarded", forwarded))).isEqualTo(client);
	}

	@ParameterizedTest
	@CsvSource(delimiter = '|', value = {
			// Obfuscated identifiers and unknown end the walk at the last address seen.
			"for=198.51.100.7, for=_hidden | 10.0.0.1", "for=198.51.100.7, for=unknown | 10.0.0.1",
			"for=198.51.100.7, for=\"_hidden\", for=10.2.2.2 | 10.2.2.2",
			"for=198.51.100.7, for=UNKNOWN, for=10.2.2.2 | 10.2.2.2",
			// Malformed elements end it too.
			"for=198.51.100.7, proto=https | 10.0.0.1", "for=198.51.100.7, for=1.1.1.1;for=2.2.2.2 | 10.0.0.1",
			"for=198.51.100.7, for=\"1.1.1.1, for=2.2.2.2\" | 10.0.0.1", "for=198.51.100.7, for=\"1.1.1.1 | 10.0.0.1",
			"for=198.51.100.7, for = 1.1.1.1 | 10.0.0.1", "for=198.51.100.7, for=1.1.1.1\"x\" | 10.0.0.1",
			"for=198.51.100.7, for=example.com | 10.0.0.1", "for=198.51.100.7, for= | 10.0.0.1",
			"for=198.51.100.7, =1.1.1.1 | 10.0.0.1", "for=198.51.100.7, for=\"1.1.1.1\"x | 10.0.0.1",
			"for=198.51.100.7, for=\"[1.1.1.1]\" | 10.0.0.1", "for=198.51.100.7, for=1.1.1.1:_a/b | 10.0.0.1" })
	void obfuscatedUnknownAndMalformedElementsEndTheWalk(String forwarded, String client) {
		assertThat(ServletClientIps.resolve(FORWARDED, request("10.0.0.1", "Forwarded", forwarded))).isEqualTo(client);
	}

	@Test
	void forwardedInstancesFormOneList() {
		MockHttpServletRequest request = request("10.0.0.1", "Forwarded", "for=6.6.6.6");
		request.addHeader("Forwarded", "for=198.51.100.7");
		request.addHeader("Forwarded", "for=10.3.3.3");
		assertThat(ServletClientIps.resolve(FORWARDED, request)).isEqualTo("198.51.100.7");
	}

	@Test
	void anUnterminatedQuoteCannotSwallowTheNextInstance() {
		MockHttpServletRequest request = request("10.0.0.1", "Forwarded", "for=\"6.6.6.6");
		request.addHeader("Forwarded", "for=198.51.100.7");
		assertThat(ServletClientIps.resolve(FORWARDED, request)).isEqualTo("198.51.100.7");
	}

	@Test
	void hugeForwardedHeadersAreBoundedAndNeverThrow() {
		String spoofed = IntStream.range(0, 10_000).mapToObj((i) -> "for=10.9." + (i / 256 % 256) + "." + (i % 256))
			.collect(Collectors.joining(", "));
		assertThat(ServletClientIps.resolve(FORWARDED, request("10.0.0.1", "Forwarded", spoofed + ", for=198.51.100.7")))
			.isEqualTo("198.51.100.7");
		// Only the right-most 64 elements are read: all trusted, so the left-most of those wins.
		assertThat(ServletClientIps.resolve(FORWARDED, request("10.0.0.1", "Forwarded", spoofed))).isEqualTo("10.9.38.208");
		for (String hostile : List.of("\"".repeat(100_000), ";".repeat(100_000), "for=" + "\"\\".repeat(50_000),
				"for=\"" + "1".repeat(100_000) + "\"", "for=" + "1".repeat(100_000), "=".repeat(100_000),
				",".repeat(100_000), "for=\u00e9\ud800", "for=\"\\")) {
			assertThat(ServletClientIps.resolve(FORWARDED, request("10.0.0.1", "Forwarded", hostile))).isEqualTo("10.0.0.1");
		}
	}

	@Test
	void onlyTheConfiguredHeaderIsRead() {
		MockHttpServletRequest xffOnly = request("10.0.0.1", "X-Forwarded-For", "198.51.100.7");
		xffOnly.addHeader("X-Real-IP", "198.51.100.8");
		assertThat(ServletClientIps.resolve(FORWARDED, xffOnly)).isEqualTo("10.0.0.1");
		assertThat(ServletClientIps.resolve(REAL_IP, request("10.0.0.1", "X-Forwarded-For", "198.51.100.7"))).isEqualTo("10.0.0.1");
		MockHttpServletRequest forwardedOnly = request("10.0.0.1", "Forwarded", "for=198.51.100.7");
		forwardedOnly.addHeader("X-Real-IP", "198.51.100.8");
		assertThat(ServletClientIps.resolve(XFF, forwardedOnly)).isEqualTo("10.0.0.1");
	}

	@Test
	void headerNamesAreCaseInsensitive() {
		ClientIpResolver lower = ClientIpResolver.builder().trustedProxies(PRIVATE).header("forwarded").build();
		assertThat(ServletClientIps.resolve(lower, request("10.0.0.1", "Forwarded", "for=198.51.100.7"))).isEqualTo("198.51.100.7");
	}

	// Single-address headers

	@Test
	void aSingleAddressHeaderIsTheClientWhenTheProxyIsTrusted() {
		assertThat(ServletClientIps.resolve(REAL_IP, request("10.0.0.1", "X-Real-IP", "198.51.100.7"))).isEqualTo("198.51.100.7");
		assertThat(ServletClientIps.resolve(REAL_IP, request("10.0.0.1", "X-Real-IP", " [2001:db8::7]:443 "))).isEqualTo("2001:db8::7");
		assertThat(ServletClientIps.resolve(REAL_IP, request("203.0.113.9", "X-Real-IP", "198.51.100.7"))).as("untrusted peer")
			.isEqualTo("203.0.113.9");
		assertThat(ServletClientIps.resolve(REAL_IP, request("10.0.0.1", "X-Real-IP", "1.1.1.1, 198.51.100.7"))).as("not one address")
			.isEqualTo("10.0.0.1");
		assertThat(ServletClientIps.resolve(REAL_IP, request("10.0.0.1", "X-Real-IP", "garbage-1"))).isEqualTo("10.0.0.1");
		assertThat(ServletClientIps.resolve(REAL_IP, request("10.0.0.1"))).isEqualTo("10.0.0.1");
		MockHttpServletRequest twice = request("10.0.0.1", "X-Real-IP", "6.6.6.6");
		twice.addHeader("X-Real-IP", "198.51.100.7");
		assertThat(ServletClientIps.resolve(REAL_IP, twice)).as("the last instance, the one the proxy wrote").isEqualTo("198.51.100.7");
	}

	// Networks

	@Test
	void ipv6ClientsAreKeyedByTheirSlash64ByDefault() {
		ClientIpResolver defaults = ClientIpResolver.builder().build();
		assertThat(ServletClientIps.resolve(defaults, request("2001:db8:7:8::1"))).isEqualTo("2001:db8:7:8::/64");
		Set<String> keys = IntStream.range(0, 50)
			.mapToObj((i) -> ServletClientIps.resolve(defaults, request("2001:db8:7:8:" + Integer.toHexString(i * 977) + ":1:2:" + i)))
			.collect(Collectors.toSet());
		assertThat(keys).containsExactly("2001:db8:7:8::/64");
		assertThat(ServletClientIps.resolve(defaults, request("2001:db8:7:9::1"))).isEqualTo("2001:db8:7:9::/64");
		assertThat(ServletClientIps.resolve(defaults, request("203.0.113.7"))).isEqualTo("203.0.113.7");
		assertThat(ServletClientIps.resolve(defaults, request("::ffff:203.0.113.7"))).as("IPv4-mapped is IPv4").isEqualTo("203.0.113.7");
		assertThat(ServletClientIps.resolveAddress(defaults, request("2001:db8:7:8::1"))).isEqualTo(InetAddresses.parse("2001:db8:7:8::1"));
	}

	@Test
	void prefixesAreConfigurable() {
		ClientIpResolver wide = ClientIpResolver.builder().ipv4Prefix(24).ipv6Prefix(48).build();
		assertThat(ServletClientIps.resolve(wide, request("2001:db8:7:8::1"))).isEqualTo("2001:db8:7::/48");
		assertThat(ServletClientIps.resolve(wide, request("203.0.113.7"))).isEqualTo("203.0.113.0/24");
		ClientIpResolver odd = ClientIpResolver.builder().ipv4Prefix(9).ipv6Prefix(33).build();
		assertThat(ServletClientIps.resolve(odd, request("255.255.255.255"))).isEqualTo("255.128.0.0/9");
		assertThat(ServletClientIps.resolve(odd, request("2001:db8:ffff::1"))).isEqualTo("2001:db8:8000::/33");
		ClientIpResolver exact = ClientIpResolver.builder().ipv6Prefix(128).build();
		assertThat(ServletClientIps.resolve(exact, request("2001:db8:7:8::1"))).isEqualTo("2001:db8:7:8::1");
	}

	@Test
	void trustedProxiesMatchTheFullAddressNotTheNetwork() {
		ClientIpResolver resolver = ClientIpResolver.builder()
			.trustedProxies(List.of(IpAddressRange.parse("2001:db8::10")))
			.build();
		// 2001:db8::11 shares the proxy's /64 key, but it is not the proxy.
		assertThat(ServletClientIps.resolve(resolver, request("2001:db8::11", "X-Forwarded-For", "198.51.100.7")))
			.isEqualTo("2001:db8::/64");
		assertThat(ServletClientIps.resolve(resolver, request("2001:db8::10", "X-Forwarded-For", "198.51.100.7")))
			.isEqualTo("198.51.100.7");
	}

	@Test
	void badSettingsAreRefused() {
		assertThatIllegalArgumentException().isThrownBy(() -> ClientIpResolver.builder().ipv6Prefix(31));
		assertThatIllegalArgumentException().isThrownBy(() -> ClientIpResolver.builder().ipv6Prefix(129));
		assertThatIllegalArgumentException().isThrownBy(() -> ClientIpResolver.builder().ipv4Prefix(7));
		assertThatIllegalArgumentException().isThrownBy(() -> ClientIpResolver.builder().ipv4Prefix(33));
		assertThatIllegalArgumentException().isThrownBy(() -> ClientIpResolver.builder().header("X Real IP"));
		assertThatIllegalArgumentException().isThrownBy(() -> ClientIpResolver.builder().header(""));
	}

	// What the container and Spring did before

	@Test
	void springsForwardedHeaderFilterChangesNoKey() throws Exception {
		for (ClientIpResolver resolver : List.of(ClientIpResolver.builder().build(), XFF, FORWARDED)) {
			MockHttpServletRequest request = request("127.0.0.1", "X-Forwarded-For", "6.6.6.6");
			request.addHeader("Forwarded", "for=7.7.7.7");
			HttpServletRequest wrapped = throughForwardedHeaderFilter(request);
			assertThat(wrapped.getRemoteAddr()).as("Spring believed the client").isIn("6.6.6.6", "7.7.7.7");
			assertThat(ServletClientIps.resolve(resolver, wrapped)).isEqualTo("127.0.0.1");
		}
	}

	@Test
	void behindSpringsFilterTheTrustedProxysHeaderIsStillRead() throws Exception {
		HttpServletRequest wrapped = throughForwardedHeaderFilter(
				request("10.0.0.1", "X-Forwarded-For", "6.6.6.6, 198.51.100.7"));
		assertThat(wrapped.getHeader("X-Forwarded-For")).as("hidden by Spring's filter").isNull();
		assertThat(ServletClientIps.resolve(XFF, wrapped)).isEqualTo("198.51.100.7");
		HttpServletRequest forwarded = throughForwardedHeaderFilter(
				request("10.0.0.1", "Forwarded", "for=6.6.6.6, for=198.51.100.7"));
		assertThat(ServletClientIps.resolve(FORWARDED, forwarded)).isEqualTo("198.51.100.7");
	}

	@Test
	void anyRequestWrapperIsLookedThrough() {
		HttpServletRequest rewritten = new HttpServletRequestWrapper(request("127.0.0.1")) {
			@Override
			public String getRemoteAddr() {
				return "6.6.6.6";
			}
		};
		assertThat(ServletClientIps.resolve(XFF, new HttpServletRequestWrapper(rewritten))).isEqualTo("127.0.0.1");
	}

	@Test
	void whatTheContainerRecordedBeforeRewritingWins() {
		// As after Tomcat's RemoteIpValve: remote address and header rewritten, originals recorded.
		MockHttpServletRequest request = request("6.6.6.6", "X-Forwarded-For", "10.0.0.1");
		request.setAttribute(ClientIpResolver.PEER_ADDRESS_ATTRIBUTE, "127.0.0.1");
		request.setAttribute(ClientIpResolver.FORWARDING_HEADER_ATTRIBUTE, List.of("6.6.6.6"));
		assertThat(ServletClientIps.resolve(XFF, request)).isEqualTo("127.0.0.1");
		request.setAttribute(ClientIpResolver.PEER_ADDRESS_ATTRIBUTE, "10.0.0.7");
		request.setAttribute(ClientIpResolver.FORWARDING_HEADER_ATTRIBUTE, List.of("5.5.5.5, 198.51.100.7"));
		assertThat(ServletClientIps.resolve(XFF, request)).isEqualTo("198.51.100.7");
	}

	@Test
	void theContainerSourceTakesTheContainersAddressIfItIsAnAddress() {
		ClientIpResolver container = ClientIpResolver.builder().source(ClientIpSource.CONTAINER).build();
		MockHttpServletRequest request = request("198.51.100.7");
		request.setAttribute(ClientIpResolver.PEER_ADDRESS_ATTRIBUTE, "10.0.0.1");
		assertThat(ServletClientIps.resolve(container, request)).isEqualTo("198.51.100.7");
		request.setRemoteAddr("garbage-1");
		assertThat(ServletClientIps.resolve(container, request)).as("not an address: the peer").isEqualTo("10.0.0.1");
		HttpServletRequest wrapped = new HttpServletRequestWrapper(request("127.0.0.1")) {
			@Override
			public String getRemoteAddr() {
				return "2001:db8:1:2::3";
			}
		};
		assertThat(ServletClientIps.resolve(container, wrapped)).isEqualTo("2001:db8:1:2::/64");
		assertThat(container.readsForwardingHeader()).isFalse();
		assertThat(XFF.readsForwardingHeader()).isTrue();
		assertThat(ClientIpResolver.builder().build().readsForwardingHeader()).isFalse();
	}

	private static HttpServletRequest throughForwardedHeaderFilter(MockHttpServletRequest request)
			throws ServletException, IOException {
		AtomicReference<HttpServletRequest> seen = new AtomicReference<>();
		MockFilterChain chain = new MockFilterChain() {
			@Override
			public void doFilter(jakarta.servlet.ServletRequest req, jakarta.servlet.ServletResponse res) {
				seen.set((HttpServletRequest) req);
			}
		};
		new ForwardedHeaderFilter().doFilter(request, new MockHttpServletResponse(), chain);
		return seen.get();
	}

	private static MockHttpServletRequest request(String remoteAddr, String... header) {
		MockHttpServletRequest request = new MockHttpServletRequest();
		request.setRemoteAddr(remoteAddr);
		for (int i = 0; i < header.length; i += 2) {
			request.addHeader(header[i], header[i + 1]);
		}
		return request;
	}

}
