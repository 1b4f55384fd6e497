package io.github.ratelimit.autoconfigure;

import java.util.ArrayList;
import java.util.List;

import io.github.ratelimit.web.ClientIpSource;

/**
 * How the client IP is found, under {@code rate-limit.client-ip.*}.
 */
public class ClientIpProperties {

	/**
	 * IP addresses or CIDR blocks (IPv4 and IPv6) of proxies whose forwarding header is
	 * believed; empty (the default) ignores forwarding headers.
	 */
	private List<String> trustedProxies = new ArrayList<>();

	/**
	 * The forwarding header read from trusted proxies, and no other: X-Forwarded-For, Forwarded
	 * (RFC 7239), or the name of a header the proxy sets to one address, such as X-Real-IP or
	 * CF-Connecting-IP.
	 */
	private String header = "X-Forwarded-For";

	/**
	 * Prefix length IPv4 clients are keyed by, 8 to 32; 32 keys each address.
	 */
	private int ipv4Prefix = 32;

	/**
	 * Prefix length IPv6 clients are keyed by, 32 to 128; 64 (one subscriber's network) by
	 * default, 128 keys each address.
	 */
	private int ipv6Prefix = 64;

	/**
	 * Whose resolution of the client address is taken: connection (the connection's peer and the
	 * limiter's own trusted proxies, whatever server.forward-headers-strategy says) or container
	 * (the address the container or Spring resolved from forwarding headers).
	 */
	private ClientIpSource source = ClientIpSource.CONNECTION;

	public List<String> getTrustedProxies() {
		return this.trustedProxies;
	}

	public void setTrustedProxies(List<String> trustedProxies) {
		this.trustedProxies = trustedProxies;
	}

	public String getHeader() {
		return this.header;
	}

	public void setHeader(String header) {
		this.header = header;
	}

	public int getIpv4Prefix() {
		return this.ipv4Prefix;
	}

	public void setIpv4Prefix(int ipv4Prefix) {
		this.ipv4Prefix = ipv4Prefix;
	}

	public int getIpv6Prefix() {
		return this.ipv6Prefix;
	}

	public void setIpv6Prefix(int ipv6Prefix) {
		this.ipv6Prefix = ipv6Prefix;
	}

	public ClientIpSource getSource() {
		return this.source;
	}

	public void setSource(ClientIpSource source) {
		this.source = source;
	}

}
