package io.github.ratelimit.web.clientip;

import java.net.InetAddress;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletRequestWrapper;
import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

import io.github.ratelimit.web.ClientIpSource;

/**
 * A servlet request's client, by a {@link ClientIpResolver}'s rules: the connection's peer as the container
 * reported it (before a {@code RemoteIpValve} or a wrapper rewrote it, {@link ClientIpResolver#PEER_ADDRESS_ATTRIBUTE}),
 * and the forwarding header walked once per request, whoever asks. A class of its own, loaded on the servlet stack
 * only: the resolver needs no servlet class (a WebFlux application has none). Public for the servlet package, not an
 * API.
 */
public final class ServletClientIps {

	/** Request attribute holding a {@link ClientIpResolver.Walk}, on the request the container created. */
	private static final String WALK_ATTRIBUTE = ClientIpResolver.class.getName() + ".WALK";

	/** The most wrappers looked through to find the request the container created. */
	private static final int MAX_WRAPPERS = 32;

	private ServletClientIps() {
	}


	/**
	 * Returns the text of a servlet request's client for its rate limit key, as
	 * {@link ClientIpResolver#resolve(String, java.util.function.Function)} of the connection's peer.
	 * @param resolver the rules
	 * @param request the request
	 * @return the key text
	 */
	public static String resolve(ClientIpResolver resolver, HttpServletRequest request) {
		HttpServletRequest connection = connectionRequest(request);
		String peer = peerText(connection);
		if (resolver.source == ClientIpSource.CONNECTION && resolver.trustedProxies.isEmpty() && resolver.ipv4Prefix == 32
				&& peer != null && InetAddresses.isCanonicalIpv4(peer)) {
			// The connection's peer is the client, and its canonical IPv4 text is its key as it is: no
			// parsing into an address and formatting back.
			return peer;
		}
		return resolver.key(resolveAddress(resolver, request, connection, peer), peer);
	}

	/**
	 * Returns the full IP address of a servlet request's client (not cut to a network).
	 * @param resolver the rules
	 * @param request the request
	 * @return the address, or {@code null} if the container reports no remote address that is an IP literal
	 */
	public static @Nullable InetAddress resolveAddress(ClientIpResolver resolver, HttpServletRequest request) {
		HttpServletRequest connection = connectionRequest(request);
		return resolveAddress(resolver, request, connection, peerText(connection));
	}

	/**
	 * Returns the IPv4 address of a servlet request's client as 32 bits when it is told without parsing: the
	 * connection's peer is the client ({@link ClientIpSource#CONNECTION}, no trusted proxies) and the container
	 * reports it as canonical IPv4 text (as Tomcat does). Then it is the address {@link #resolveAddress} returns.
	 * @param resolver the rules
	 * @param request the request
	 * @return the bits, or {@code -1} when {@link #resolveAddress} must tell
	 */
	public static long quickIpv4(ClientIpResolver resolver, HttpServletRequest request) {
		if (resolver.source != ClientIpSource.CONNECTION || !resolver.trustedProxies.isEmpty()) {
			return -1;
		}
		String peer = peerText(connectionRequest(request));
		return (peer != null) ? InetAddresses.canonicalIpv4Bits(peer) : -1;
	}

	private static @Nullable InetAddress resolveAddress(ClientIpResolver resolver, HttpServletRequest request,
			HttpServletRequest connection, @Nullable String peer) {
		if (resolver.source == ClientIpSource.CONTAINER) {
			InetAddress resolved = InetAddresses.parseHop(request.getRemoteAddr());
			return (resolved != null) ? resolved : InetAddresses.parseHop(peer);
		}
		if (!resolver.readsForwardingHeader()) {
			return InetAddresses.parseHop(peer);
		}
		// Read and written on the request the container created, never through a wrapper (which may
		// override attributes, as it may headers), and only for what it was worked out from.
		Object recorded = connection.getAttribute(ClientIpResolver.FORWARDING_HEADER_ATTRIBUTE);
		if (connection.getAttribute(WALK_ATTRIBUTE) instanceof ClientIpResolver.Walk walk && walk.resolver() == resolver
				&& walk.recorded() == recorded && Objects.equals(walk.peer(), peer)) {
			return walk.client();
		}
		InetAddress client = resolver.resolveAddress(peer, (name) -> (recorded instanceof List<?> values)
				? ClientIpResolver.lastValues(Collections.enumeration(values))
				: ClientIpResolver.lastValues(connection.getHeaders(name)));
		connection.setAttribute(WALK_ATTRIBUTE, new ClientIpResolver.Walk(resolver, peer, recorded, client));
		return client;
	}

	/**
	 * Returns the request as the container created it, looking through wrappers: their
	 * {@code getRemoteAddr()} and headers may already have been rewritten from forwarding headers.
	 */
	private static HttpServletRequest connectionRequest(HttpServletRequest request) {
		ServletRequest current = request;
		for (int i = 0; i < MAX_WRAPPERS && current instanceof ServletRequestWrapper wrapper; i++) {
			current = wrapper.getRequest();
		}
		return (current instanceof HttpServletRequest http) ? http : request;
	}

	private static @Nullable String peerText(HttpServletRequest connection) {
		Object recorded = connection.getAttribute(ClientIpResolver.PEER_ADDRESS_ATTRIBUTE);
		return (recorded instanceof String peer) ? peer : connection.getRemoteAddr();
	}
}
