package io.github.ratelimit.web;

/**
 * Whose resolution of the client address is taken ({@code rate-limit.client-ip.source}).
 */
public enum ClientIpSource {

	/**
	 * The connection's peer and this resolver's own trusted proxies and header (the default),
	 * whatever the container or Spring did with forwarding headers.
	 */
	CONNECTION,

	/**
	 * The address the container (or Spring's {@code ForwardedHeaderFilter}) resolved, as the
	 * application sees it in {@code getRemoteAddr()}; one that is not an IP address is not
	 * believed and the connection's peer is used.
	 */
	CONTAINER
}
