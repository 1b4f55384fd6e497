package io.github.ratelimit.web.servlet;

import java.net.InetAddress;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Enumeration;
import java.util.Iterator;
import java.util.List;

import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletRequestWrapper;
import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;

import io.github.ratelimit.web.ClientIpSource;

/**
 * Works out the IP address of the client that sent a request, and the text of its rate limit key.
 * Immutable and thread-safe.
 *
 * <p><b>Whose word is taken.</b> The client is the connection's peer, unless the peer is one of the
 * configured trusted proxies. Only then is the forwarding {@linkplain #getHeader() header} read, and
 * only that one:
 * <ul>
 * <li>{@code X-Forwarded-For} (the default): all instances of the header, in order, form one list of
 * hops, walked from the right (the hop the nearest proxy appended) towards the left. The first hop
 * that is not a trusted proxy is the client. The walk stops at the first malformed or empty hop, and
 * the last valid address seen wins, because anything to the left of garbage cannot be attributed to a
 * trusted proxy. If every hop is trusted, the left-most valid one is the client.</li>
 * <li>{@code Forwarded} (RFC 7239): the {@code for=} parameters of its elements, walked the same way;
 * an obfuscated identifier ({@code for=_hidden}), {@code for=unknown} or an element without
 * {@code for=} ends the walk like a malformed hop.</li>
 * <li>any other name ({@code X-Real-IP}, {@code CF-Connecting-IP}): a header that the proxy sets to
 * one address; its last instance is the client, and the peer if it is not a valid address.</li>
 * </ul>
 * The left-most entry, which the client writes itself, is therefore never believed on its own, and
 * with no trusted proxies (the default) forwarding headers are ignored entirely. Hops may carry a port
 * or a zone id ({@code 203.0.113.7:4711}, {@code [2001:db8::1]:443}, {@code fe80::1%eth0}).
 *
 * <p><b>The connection's peer</b> is what the container reports before any forwarding header was
 * applied: request wrappers (Spring's {@code ForwardedHeaderFilter}, Tomcat's {@code RemoteIpFilter})
 * are looked through, and when a container integration recorded the peer and the raw forwarding
 * header before the container rewrote them (Tomcat's {@code RemoteIpValve}), under
 * {@link #PEER_ADDRESS_ATTRIBUTE} and {@link #FORWARDING_HEADER_ATTRIBUTE}, those are used. With
 * {@link ClientIpSource#CONTAINER} the address the container (or Spring) resolved is taken instead, if it is
 * an IP address at all.
 *
 * <p><b>Keys</b> ({@link #resolve(HttpServletRequest)}) name the client's network: IPv6 addresses are
 * cut to {@linkplain #getIpv6Prefix() a prefix} (a /64 by default, since one subscriber holds a whole
 * /64), IPv4 addresses to theirs (/32 by default), so {@code 2001:db8:7:8::1} is keyed
 * {@code 2001:db8:7:8::/64} and a network of full length is the bare address. Trusted proxies are
 * always matched against the full address.
 *
 * <p>The work is bounded whatever the headers hold: at most the right-most {@value #MAX_HOPS} hops
 * are considered, no DNS lookup is ever made, and no header content makes a method throw. Addresses
 * are normalised (RFC 5952 for IPv6, IPv4-mapped IPv6 as IPv4) so that one client always gets the
 * same key.
 */
final class ClientIpResolver {

	/** The default forwarding header. */
	public static final String X_FORWARDED_FOR = "X-Forwarded-For";

	/** The RFC 7239 forwarding header. */
	public static final String FORWARDED = "Forwarded";

	/** The most hops considered, counted from the right. */
	public static final int MAX_HOPS = 64;

	/**
	 * Request attribute under which a container integration may record the connection's peer address
	 * (a {@code String}) before the container rewrites {@code getRemoteAddr()}.
	 */
	public static final String PEER_ADDRESS_ATTRIBUTE = ClientIpResolver.class.getName() + ".PEER_ADDRESS";

	/**
	 * Request attribute under which a container integration may record the values of the forwarding
	 * {@linkplain #getHeader() header} (a {@code List<String>}) as the client sent them, before the
	 * container rewrites them.
	 */
	public static final String FORWARDING_HEADER_ATTRIBUTE = ClientIpResolver.class.getName()
			+ ".FORWARDING_HEADER";

	/** The shortest IPv4 prefix allowed for keys. */
	public static final int MIN_IPV4_PREFIX = 8;

	/** The shortest IPv6 prefix allowed for keys. */
	public static final int MIN_IPV6_PREFIX = 32;

	/** Returned when the container gives no remote address. */
	static final String UNKNOWN = "unknown";

	/** The longest unparsable remote address returned as is. */
	private static final int MAX_RAW_REMOTE_LENGTH = 64;

	/** How deep request wrappers are looked through. */
	private static final int MAX_WRAPPERS = 32;

	private final List<IpAddressRange> trustedProxies;

	private final String header;

	private final HeaderFormat format;

	private final int ipv4Prefix;

	private final int ipv6Prefix;

	private final ClientIpSource source;

	/**
	 * Creates a resolver with the defaults of {@link #builder()} and the given trusted proxies.
	 * @param trustedProxies the address ranges of proxies whose {@code X-Forwarded-For} entries
	 * are believed; empty to ignore forwarding headers
	 */
	public ClientIpResolver(List<IpAddressRange> trustedProxies) {
		this(builder().trustedProxies(trustedProxies));
	}

	private ClientIpResolver(Builder builder) {
		this.trustedProxies = builder.trustedProxies;
		this.header = builder.header;
		this.format = HeaderFormat.of(builder.header);
		this.ipv4Prefix = builder.ipv4Prefix;
		this.ipv6Prefix = builder.ipv6Prefix;
		this.source = builder.source;
	}

	/**
	 * Returns a builder whose defaults are those of the {@code rate-limit.client-ip.*} properties: no
	 * trusted proxies, {@code X-Forwarded-For}, IPv4 keyed by address, IPv6 by /64, the connection's
	 * own peer.
	 * @return a new builder
	 */
	public static Builder builder() {
		return new Builder();
	}

	/**
	 * Returns the trusted proxy ranges.
	 * @return an unmodifiable list, possibly empty
	 */
	public List<IpAddressRange> getTrustedProxies() {
		return this.trustedProxies;
	}

	/**
	 * Returns the forwarding header read from trusted proxies.
	 * @return the header name
	 */
	public String getHeader() {
		return this.header;
	}

	/**
	 * Returns the prefix length IPv4 keys are cut to.
	 * @return 8-32
	 */
	public int getIpv4Prefix() {
		return this.ipv4Prefix;
	}

	/**
	 * Returns the prefix length IPv6 keys are cut to.
	 * @return 32-128
	 */
	public int getIpv6Prefix() {
		return this.ipv6Prefix;
	}

	/**
	 * Returns whose resolution of the client address is taken.
	 * @return the source
	 */
	public ClientIpSource getSource() {
		return this.source;
	}

	/**
	 * Returns whether this resolver ever reads the forwarding header: only with trusted proxies and
	 * {@link ClientIpSource#CONNECTION}.
	 * @return {@code true} if {@link #getHeader()} may be read
	 */
	public boolean readsForwardingHeader() {
		return this.source == ClientIpSource.CONNECTION && !this.trustedProxies.isEmpty();
	}

	/**
	 * Returns whether an address belongs to a trusted proxy.
	 * @param address the address
	 * @return {@code true} if any trusted range contains it
	 */
	public boolean isTrusted(InetAddress address) {
		for (IpAddressRange range : this.trustedProxies) {
			if (range.contains(address)) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Returns the text of a request's client for its rate limit key: the client's network in
	 * canonical form ({@code 2001:db8:7:8::/64}, or {@code 203.0.113.7} when the prefix is the full
	 * length).
	 * @param request the request
	 * @return the network text; the trimmed remote address (at most 64 characters) if the container
	 * reports one that is not an IP literal; or {@code "unknown"} if it reports none
	 */
	public String resolve(HttpServletRequest request) {
		if (this.source == ClientIpSource.CONNECTION && this.trustedProxies.isEmpty() && this.ipv4Prefix == 32) {
			// The connection's peer is the client, and its canonical IPv4 text is its key as it is: no
			// parsing into an address and formatting back.
			String peer = peerText(connectionRequest(request));
			if (peer != null && InetAddresses.isCanonicalIpv4(peer)) {
				return peer;
			}
		}
		InetAddress address = resolveAddress(request);
		if (address != null) {
			return InetAddresses.formatNetwork(address, this.ipv4Prefix, this.ipv6Prefix);
		}
		String remoteAddr = peerText(connectionRequest(request));
		if (remoteAddr == null || remoteAddr.isBlank()) {
			return UNKNOWN;
		}
		// Set by the container (a Unix socket path, say), not by the client: usable as a key.
		String trimmed = remoteAddr.trim();
		return (trimmed.length() > MAX_RAW_REMOTE_LENGTH) ? trimmed.substring(0, MAX_RAW_REMOTE_LENGTH) : trimmed;
	}

	/**
	 * Returns an address or network an operator wrote (for the actuator) as {@link #resolve} keys it:
	 * canonical and cut to the configured prefix, so {@code ::ffff:203.0.113.7} is {@code 203.0.113.7}
	 * and {@code 2001:db8:7:8::1} or {@code 2001:0db8:7:8:0:0:0:0/64} is {@code 2001:db8:7:8::/64}.
	 * @param text an address, or a network whose prefix is the configured one
	 * @return the key text; {@code text} as it is when it is no IP literal or its prefix is another one
	 * (no key has it)
	 */
	String network(String text) {
		int slash = text.indexOf('/');
		InetAddress address = InetAddresses.parse((slash < 0) ? text : text.substring(0, slash));
		if (address == null) {
			return text;
		}
		if (slash >= 0) {
			int prefix = (address.getAddress().length == 4) ? this.ipv4Prefix : this.ipv6Prefix;
			if (!text.substring(slash + 1).equals(Integer.toString(prefix))) {
				return text;
			}
		}
		return InetAddresses.formatNetwork(address, this.ipv4Prefix, this.ipv6Prefix);
	}

	/**
	 * Returns the IPv4 address of a request's client as 32 bits when it is told without parsing: the
	 * connection's peer is the client ({@link ClientIpSource#CONNECTION}, no trusted proxies) and the
	 * container reports it as canonical IPv4 text (as Tomcat does). Then it is the address
	 * {@link #resolveAddress} returns.
	 * @param request the request
	 * @return the bits, or {@code -1} when {@link #resolveAddress} must tell
	 */
	long quickIpv4(HttpServletRequest request) {
		if (this.source != ClientIpSource.CONNECTION || !this.trustedProxies.isEmpty()) {
			return -1;
		}
		String peer = peerText(connectionRequest(request));
		return (peer != null) ? InetAddresses.canonicalIpv4Bits(peer) : -1;
	}

	/**
	 * Returns the full IP address of a request's client (not cut to a network).
	 * @param request the request
	 * @return the address, or {@code null} if the container reports no remote address that is an IP
	 * literal
	 */
	public @Nullable InetAddress resolveAddress(HttpServletRequest request) {
		HttpServletRequest connection = connectionRequest(request);
		InetAddress peer = InetAddresses.parseHop(peerText(connection));
		if (this.source == ClientIpSource.CONTAINER) {
			InetAddress resolved = InetAddresses.parseHop(request.getRemoteAddr());
			return (resolved != null) ? resolved : peer;
		}
		if (peer == null || this.trustedProxies.isEmpty() || !isTrusted(peer)) {
			return peer;
		}
		Deque<String> values = lastHeaderValues(connection);
		return switch (this.format) {
			case X_FORWARDED_FOR -> walkForwardedFor(values, peer);
			case FORWARDED -> walkForwarded(values, peer);
			case SINGLE -> singleAddress(values, peer);
		};
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
		Object recorded = connection.getAttribute(PEER_ADDRESS_ATTRIBUTE);
		return (recorded instanceof String peer) ? peer : connection.getRemoteAddr();
	}

	private InetAddress walkForwardedFor(Deque<String> values, InetAddress peer) {
		InetAddress candidate = peer;
		int hops = 0;
		Iterator<String> iterator = values.descendingIterator();
		while (iterator.hasNext()) {
			String value = iterator.next();
			// Walk this header value's comma-separated entries from the right without splitting
			// it, so a header with thousands of commas costs no more than MAX_HOPS entries.
			int end = value.length();
			while (end >= 0) {
				if (hops++ == MAX_HOPS) {
					return candidate;
				}
				int comma = value.lastIndexOf(',', end - 1);
				InetAddress hop = parseHop(value, comma + 1, end);
				if (hop == null) {
					return candidate;
				}
				candidate = hop;
				if (!isTrusted(hop)) {
					return hop;
				}
				end = comma;
			}
		}
		return candidate;
	}

	private InetAddress walkForwarded(Deque<String> values, InetAddress peer) {
		Deque<String> nodes = new ArrayDeque<>();
		for (String value : values) {
			ForwardedElements.forNodes(value, nodes, MAX_HOPS);
		}
		InetAddress candidate = peer;
		Iterator<String> iterator = nodes.descendingIterator();
		while (iterator.hasNext()) {
			InetAddress hop = ForwardedElements.parseNode(iterator.next());
			if (hop == null) {
				return candidate;
			}
			candidate = hop;
			if (!isTrusted(hop)) {
				return hop;
			}
		}
		return candidate;
	}

	private static InetAddress singleAddress(Deque<String> values, InetAddress peer) {
		if (values.isEmpty()) {
			return peer;
		}
		String last = values.getLast();
		InetAddress address = parseHop(last, 0, last.length());
		return (address != null) ? address : peer;
	}

	/**
	 * Returns the last values of the forwarding header that can hold the right-most
	 * {@link #MAX_HOPS} hops (every value holds at least one hop, so older ones are dropped as they
	 * arrive): as recorded before the container rewrote them, else as the container has them.
	 */
	private Deque<String> lastHeaderValues(HttpServletRequest connection) {
		Deque<String> values = new ArrayDeque<>();
		Iterator<?> headers;
		if (connection.getAttribute(FORWARDING_HEADER_ATTRIBUTE) instanceof List<?> recorded) {
			headers = recorded.iterator();
		}
		else {
			Enumeration<String> enumeration = connection.getHeaders(this.header);
			if (enumeration == null) {
				// The container may refuse access to headers.
				return values;
			}
			headers = enumeration.asIterator();
		}
		while (headers.hasNext()) {
			Object value = headers.next();
			if (values.size() == MAX_HOPS) {
				values.removeFirst();
			}
			values.addLast((value instanceof String text) ? text : "");
		}
		return values;
	}

	/**
	 * Parses {@code value[start, end)} as a hop, without copying an over-long entry.
	 * @return the address, or {@code null} if the entry is empty or malformed
	 */
	private static @Nullable InetAddress parseHop(String value, int start, int end) {
		// Same whitespace rule as String.trim().
		while (start < end && value.charAt(start) <= ' ') {
			start++;
		}
		while (end > start && value.charAt(end - 1) <= ' ') {
			end--;
		}
		if (end == start || end - start > InetAddresses.MAX_HOP_LENGTH) {
			return null;
		}
		return InetAddresses.parseHop(value.substring(start, end));
	}

	private enum HeaderFormat {

		X_FORWARDED_FOR, FORWARDED, SINGLE;

		static HeaderFormat of(String header) {
			if (header.equalsIgnoreCase(ClientIpResolver.X_FORWARDED_FOR)) {
				return X_FORWARDED_FOR;
			}
			return header.equalsIgnoreCase(ClientIpResolver.FORWARDED) ? FORWARDED : SINGLE;
		}

	}

	/**
	 * Builds a {@link ClientIpResolver}. Not thread-safe.
	 */
	public static final class Builder {

		private List<IpAddressRange> trustedProxies = List.of();

		private String header = X_FORWARDED_FOR;

		private int ipv4Prefix = 32;

		private int ipv6Prefix = 64;

		private ClientIpSource source = ClientIpSource.CONNECTION;

		private Builder() {
		}

		/**
		 * Sets the proxies whose forwarding header is believed.
		 * @param trustedProxies the ranges; empty (the default) to ignore forwarding headers
		 * @return this builder
		 */
		public Builder trustedProxies(List<IpAddressRange> trustedProxies) {
			Assert.notNull(trustedProxies, "'trustedProxies' must not be null");
			Assert.noNullElements(trustedProxies, "'trustedProxies' must not contain null elements");
			this.trustedProxies = List.copyOf(trustedProxies);
			return this;
		}

		/**
		 * Sets the forwarding header read from trusted proxies.
		 * @param header {@code X-Forwarded-For} (the default), {@code Forwarded}, or the name of a
		 * header that holds one address
		 * @return this builder
		 */
		public Builder header(String header) {
			Assert.isTrue(isToken(header), () -> "'" + header + "' is not an HTTP header name");
			this.header = header;
			return this;
		}

		/**
		 * Sets the prefix length IPv4 keys are cut to.
		 * @param ipv4Prefix 8-32; 32 (the default) keys each address
		 * @return this builder
		 */
		public Builder ipv4Prefix(int ipv4Prefix) {
			Assert.isTrue(ipv4Prefix >= MIN_IPV4_PREFIX && ipv4Prefix <= 32, "'ipv4Prefix' must be between 8 and 32");
			this.ipv4Prefix = ipv4Prefix;
			return this;
		}

		/**
		 * Sets the prefix length IPv6 keys are cut to.
		 * @param ipv6Prefix 32-128; 64 (the default) keys each /64
		 * @return this builder
		 */
		public Builder ipv6Prefix(int ipv6Prefix) {
			Assert.isTrue(ipv6Prefix >= MIN_IPV6_PREFIX && ipv6Prefix <= 128,
					"'ipv6Prefix' must be between 32 and 128");
			this.ipv6Prefix = ipv6Prefix;
			return this;
		}

		/**
		 * Sets whose resolution of the client address is taken.
		 * @param source the source
		 * @return this builder
		 */
		public Builder source(ClientIpSource source) {
			Assert.notNull(source, "'source' must not be null");
			this.source = source;
			return this;
		}

		/**
		 * Builds the resolver.
		 * @return the resolver
		 */
		public ClientIpResolver build() {
			return new ClientIpResolver(this);
		}

	}

	/** Whether a text is an RFC 9110 token, as header names are. */
	static boolean isToken(@Nullable String text) {
		if (text == null || text.isEmpty()) {
			return false;
		}
		for (int i = 0; i < text.length(); i++) {
			char c = text.charAt(i);
			boolean alphanumeric = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
			if (!alphanumeric && "!#$%&'*+-.^_`|~".indexOf(c) < 0) {
				return false;
			}
		}
		return true;
	}

}
