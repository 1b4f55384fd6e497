package io.github.ratelimit.web.policy;

import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.mock.web.MockHttpServletRequest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

import io.github.ratelimit.web.clientip.ClientIpResolver;
import io.github.ratelimit.web.clientip.IpAddressRange;
import io.github.ratelimit.web.key.KeyResolvers;
import io.github.ratelimit.web.key.UnreadableRequestException;
import io.github.ratelimit.web.servlet.ServletRequestView;

/**
 * Exempt client IPs (IPv4 and IPv6, against the resolved client IP) and exempt conditions.
 */
class RateLimitExemptionsTests {

	private final ClientIpResolver direct = ClientIpResolver.builder().build();

	private final KeyResolvers keyResolvers = new KeyResolvers(this.direct, null);

	@Test
	void cidrsOfBothFamiliesMatchTheClientIp() {
		RateLimitExemptions exemptions = RateLimitExemptions.of(
				List.of(IpAddressRange.parse("10.0.0.0/8"), IpAddressRange.parse("2001:db8::/32")), null,
				this.keyResolvers, "rate-limit.exempt.when");
		assertThat(exemptions.isExempt(view(request("10.1.2.3")))).isTrue();
		assertThat(exemptions.isExempt(view(request("11.1.2.3")))).isFalse();
		assertThat(exemptions.isExempt(view(request("2001:db8:0:0:0:0:0:7")))).isTrue();
		assertThat(exemptions.isExempt(view(request("2001:db9::7")))).isFalse();
		assertThat(exemptions.isExempt(view(request("not-an-ip")))).isFalse();
	}

	@Test
	void aCanonicalIpv4PeerIsJudgedAsItsParsedAddressIs() throws java.net.UnknownHostException {
		// The quick path (the peer's text compared as bits) and the parsed address agree on every range.
		java.util.Random random = new java.util.Random(7);
		for (int i = 0; i < 2_000; i++) {
			byte[] network = new byte[4];
			random.nextBytes(network);
			int prefix = random.nextInt(33);
			IpAddressRange range = IpAddressRange.parse(dotted(network) + "/" + prefix);
			RateLimitExemptions exemptions = RateLimitExemptions.of(List.of(range), null, this.keyResolvers,
					"rate-limit.exempt.when");
			byte[] client = network.clone();
			// Flip one bit, inside or outside the prefix.
			int bit = random.nextInt(32);
			client[bit / 8] ^= (byte) (0x80 >>> (bit % 8));
			for (byte[] address : new byte[][] { network, client }) {
				String text = dotted(address);
				assertThat(exemptions.isExempt(view(request(text)))).as(text + " in " + range)
					.isEqualTo(range.contains(java.net.InetAddress.getByName(text)));
			}
		}
		RateLimitExemptions loopback = RateLimitExemptions.of(List.of(IpAddressRange.parse("::ffff:127.0.0.0/104")),
				null, this.keyResolvers, "rate-limit.exempt.when");
		assertThat(loopback.isExempt(view(request("127.0.0.1")))).as("an IPv4-mapped range holds IPv4 clients").isTrue();
		assertThat(loopback.isExempt(view(request("128.0.0.1")))).isFalse();
		RateLimitExemptions ipv6Only = RateLimitExemptions.of(List.of(IpAddressRange.parse("::/0")), null,
				this.keyResolvers, "rate-limit.exempt.when");
		assertThat(ipv6Only.isExempt(view(request("127.0.0.1")))).as("an IPv6 range holds no IPv4 client").isFalse();
	}

	@Test
	void aNonExemptIpv4PeerStillMeetsTheCondition() {
		RateLimitExemptions exemptions = RateLimitExemptions.of(List.of(IpAddressRange.parse("10.0.0.0/8")),
				"header('X-Internal') == 'yes'", this.keyResolvers, "rate-limit.exempt.when");
		MockHttpServletRequest internal = request("11.0.0.1");
		assertThat(exemptions.isExempt(view(internal))).isFalse();
		internal.addHeader("X-Internal", "yes");
		assertThat(exemptions.isExempt(view(internal))).isTrue();
	}

	@Test
	void aSpoofedForwardingHeaderDoesNotMakeAClientExempt() {
		RateLimitExemptions exemptions = RateLimitExemptions.of(List.of(IpAddressRange.parse("10.0.0.0/8")), null,
				this.keyResolvers, "rate-limit.exempt.when");
		MockHttpServletRequest spoofed = request("203.0.113.7");
		spoofed.addHeader("X-Forwarded-For", "10.0.0.1");
		assertThat(exemptions.isExempt(view(spoofed))).isFalse();
		ClientIpResolver behindProxy = ClientIpResolver.builder().trustedProxies(List.of(IpAddressRange.parse("192.0.2.1"))).build();
		RateLimitExemptions trusting = RateLimitExemptions.of(List.of(IpAddressRange.parse("10.0.0.0/8")), null,
				new KeyResolvers(behindProxy, null), "rate-limit.exempt.when");
		MockHttpServletRequest forwarded = request("192.0.2.1");
		forwarded.addHeader("X-Forwarded-For", "10.0.0.1");
		assertThat(trusting.isExempt(new ServletRequestView(forwarded, behindProxy))).as("forwarded by a trusted proxy").isTrue();
	}

	@Test
	void aConditionThatIsNotABooleanExemptsNobodyAndOneThatThrowsRefusesTheRequest() {
		RateLimitExemptions throwing = RateLimitExemptions.of(List.of(), "header('X-None').length() > 0",
				this.keyResolvers, "rate-limit.exempt.when");
		assertThatExceptionOfType(UnreadableRequestException.class)
			.isThrownBy(() -> throwing.isExempt(view(request("10.0.0.1"))))
			.satisfies((ex) -> assertThat(ex.policy()).isNull());
		RateLimitExemptions nullSafe = RateLimitExemptions.of(List.of(), "header('X-None')?.length() > 0",
				this.keyResolvers, "rate-limit.exempt.when");
		assertThat(nullSafe.isExempt(view(request("10.0.0.1")))).isFalse();
		RateLimitExemptions notBoolean = RateLimitExemptions.of(List.of(), "header('X-Internal')", this.keyResolvers,
				"rate-limit.exempt.when");
		MockHttpServletRequest internal = request("10.0.0.1");
		internal.addHeader("X-Internal", "yes");
		assertThat(notBoolean.isExempt(view(internal))).isFalse();
		RateLimitExemptions condition = RateLimitExemptions.of(List.of(), "#{header('X-Internal') == 'yes'}",
				this.keyResolvers, "rate-limit.exempt.when");
		assertThat(condition.isExempt(view(internal))).isTrue();
	}

	@Test
	void aConditionCannotReachBeyondTheRequest() {
		RateLimitExemptions condition = RateLimitExemptions.of(List.of(),
				"T(java.lang.Runtime).getRuntime() != null", this.keyResolvers, "rate-limit.exempt.when");
		assertThatExceptionOfType(UnreadableRequestException.class).isThrownBy(() -> condition.isExempt(view(request("10.0.0.1"))));
	}

	private ServletRequestView view(MockHttpServletRequest request) {
		return new ServletRequestView(request, this.direct);
	}

	private static MockHttpServletRequest request(String remoteAddr) {
		MockHttpServletRequest request = new MockHttpServletRequest("GET", "/");
		request.setRemoteAddr(remoteAddr);
		return request;
	}
	private static String dotted(byte[] address) {
		try {
			return java.net.InetAddress.getByAddress(address).getHostAddress();
		}
		catch (java.net.UnknownHostException ex) {
			throw new IllegalArgumentException(ex);
		}
	}

}
