package io.github.ratelimit.autoconfigure;

import java.util.List;

import org.springframework.boot.context.properties.bind.DefaultValue;

import io.github.ratelimit.web.ClientIpSource;

/**
 * How the client IP is found, under {@code rate-limit.client-ip.*}.
 *
 * @param trustedProxies IP addresses or CIDR blocks (IPv4 and IPv6) of proxies whose forwarding header is
 * believed; empty (the default) ignores forwarding headers.
 * @param header The forwarding header read from trusted proxies, and no other: X-Forwarded-For, Forwarded
 * (RFC 7239), or the name of a header the proxy sets to one address, such as X-Real-IP or
 * CF-Connecting-IP.
 * @param ipv4Prefix Prefix length IPv4 clients are keyed by, 8 to 32; 32 keys each address.
 * @param ipv6Prefix Prefix length IPv6 clients are keyed by, 32 to 128; 64 (one subscriber's network) by
 * default, 128 keys each address.
 * @param source Whose resolution of the client address is taken: connection (the connection's peer and the
 * limiter's own trusted proxies, whatever server.forward-headers-strategy says) or container (the address
 * the container or Spring resolved from forwarding headers).
 */
public record ClientIpProperties(@DefaultValue List<String> trustedProxies,
		@DefaultValue("X-Forwarded-For") String header, @DefaultValue("32") int ipv4Prefix,
		@DefaultValue("64") int ipv6Prefix, @DefaultValue("connection") ClientIpSource source) {

	/** The values when none is set: those of the {@link DefaultValue} annotations (a test holds them equal). */
	static final ClientIpProperties DEFAULTS = new ClientIpProperties(List.of(), "X-Forwarded-For", 32, 64,
			ClientIpSource.CONNECTION);

}
