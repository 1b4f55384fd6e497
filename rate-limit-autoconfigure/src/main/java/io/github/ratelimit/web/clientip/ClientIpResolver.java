package io.github.ratelimit.web.clientip;

import java.net.InetAddress;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import java.util.regex.Pattern;

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
 * <p><b>Any stack.</b> {@link #resolveAddress(InetAddress, Function)} and
 * {@link #resolve(String, Function)} take the connection's peer and a lookup of the request's headers
 * by name, so that they serve any web stack. The servlet methods ({@link ServletClientIps#resolve},
 * {@link ServletClientIps#resolveAddress}) find the connection's peer as the container reported it
 * before any forwarding header was applied: request wrappers (Spring's {@code ForwardedHeaderFilter},
 * Tomcat's {@code RemoteIpFilter}) are looked through, and when a container integration recorded the peer
 * and the raw forwarding header before the container rewrote them (Tomcat's {@code RemoteIpValve}), under
 * {@link #PEER_ADDRESS_ATTRIBUTE} and {@link #FORWARDING_HEADER_ATTRIBUTE}, those are used. With
 * {@link ClientIpSource#CONTAINER} the address the container (or Spring) resolved is taken instead, if it
 * is an IP address at all. A request's forwarding header is walked once: the client found is kept on the
 * request the container created, where no wrapper can change it, for the resolver that found it.
 *
 * <p><b>Keys</b> ({@link ServletClientIps#resolve}) name the client's network: IPv6 addresses are
 * cut to {@linkplain Builder#ipv6Prefix(int) a prefix} (a /64 by default, since one subscriber holds a whole
 * /64), IPv4 addresses to theirs (/32 by default), so {@code 2001:db8:7:8::1} is keyed
 * {@code 2001:db8:7:8::/64} and a network of full length is the bare address. Trusted proxies are
 * always matched against the full address.
 *
 * <p>The work is bounded whatever the headers hold: at most the right-most {@value #MAX_HOPS} hops
 * are considered, no DNS lookup is ever made, and no header content makes a method throw. Addresses
 * are normalised (RFC 5952 for IPv6, IPv4-mapped IPv6 as IPv4) so that one client always gets the
 * same key.
 */
public final class ClientIpResolver {

	/** The default forwarding header. */
	static final String X_FORWARDED_FOR = "X-Forwarded-For";

	/** The RFC 7239 forwarding header. */
	static final String FORWARDED = "Forwarded";

	/** The most hops considered, counted from the right. */
	static final int MAX_HOPS = 64;

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
	public static final String FORWARDING_HEADER_ATTRIBUTE = ClientIpResolver.class.getName() + ".FORWARDING_HEADER";

	/** The shortest IPv4 prefix allowed for keys. */
	public static final int MIN_IPV4_PREFIX = 8;

	/** The shortest IPv6 prefix allowed for keys. */
	public static final int MIN_IPV6_PREFIX = 32;

	/** Returned when the container gives no remote address. */
	static final String UNKNOWN = "unknown";

	/** The longest unparsable remote address returned as is. */
	private static final int MAX_RAW_REMOTE_LENGTH = 64;

	/** An RFC 9110 token: ASCII letters and digits ({@code \w} without UNICODE_CHARACTER_CLASS) and !#$%&'*+-.^_`|~. */
	private static final Pattern TOKEN = Pattern.compile("[\\w!#$%&'*+.^`|~-]+");

	final List<IpAddressRange> trustedProxies;

	private final String header;

	private final HeaderFormat format;

	final int ipv4Prefix;

	final int ipv6Prefix;

	final ClientIpSource source;

	private ClientIpResolver(Builder builder) {
		this.trustedProxies = builder.trustedProxies;
		this.header = builder.header;
		this.format = builder.header.equalsIgnoreCase(X_FORWARDED_FOR) ? HeaderFormat.X_FORWARDED_FOR
				: builder.header.equalsIgnoreCase(FORWARDED) ? HeaderFormat.FORWARDED : HeaderFormat.SINGLE;
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

	/** The forwarding header read from trusted proxies. */
	public String getHeader() {
		return this.header;
	}

	public ClientIpSource getSource() {
		return this.source;
	}

	/** Whether the forwarding header is ever read: only with trusted proxies and {@link ClientIpSource#CONNECTION}. */
	public boolean readsForwardingHeader() {
		return this.source == ClientIpSource.CONNECTION && !this.trustedProxies.isEmpty();
	}

	/** Whether an address (its full length) belongs to a trusted proxy. */
	boolean isTrusted(InetAddress address) {
		for (IpAddressRange range : this.trustedProxies) {
			if (range.contains(address)) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Returns the full IP address (not cut to a network) of the client of a connection, on any web stack.
	 * @param peer the connection's peer; with {@link ClientIpSource#CONTAINER} the address the server
	 * resolved; {@code null} if there is none
	 * @param headers the values of a request header by name (every instance, in order; {@code null} or
	 * empty when there is none), asked only for {@link #getHeader()}, and only when the peer is trusted
	 * @return the client, or {@code null} when {@code peer} is
	 */
	@Nullable InetAddress resolveAddress(@Nullable InetAddress peer, Function<String, @Nullable List<String>> headers) {
		if (peer == null || !readsForwardingHeader() || !isTrusted(peer)) {
			return peer;
		}
		List<String> values = headers.apply(this.header);
		if (values == null || values.isEmpty()) {
			return peer;
		}
		List<String> last = values.subList(Math.max(0, values.size() - MAX_HOPS), values.size());
		if (this.format == HeaderFormat.SINGLE) {
			InetAddress address = InetAddresses.parseHop(last.get(last.size() - 1));
			return (address != null) ? address : peer;
		}
		boolean forwarded = this.format == HeaderFormat.FORWARDED;
		InetAddress candidate = peer;
		for (String hop : forwarded ? ForwardedElements.forNodes(last, MAX_HOPS) : forwardedForHops(last)) {
			InetAddress address = forwarded ? ForwardedElements.parseNode(hop) : InetAddresses.parseHop(hop);
			if (address == null) {
				return candidate;
			}
			candidate = address;
			if (!isTrusted(address)) {
				return address;
			}
		}
		return candidate;
	}

	/**
	 * Returns the full IP address of the client of a connection whose peer is given as text.
	 * @param peer the connection's peer as the server reports it (a port or zone id is dropped)
	 * @param headers as for {@link #resolveAddress(InetAddress, Function)}
	 * @return the client, or {@code null} when {@code peer} is no IP address
	 */
	public @Nullable InetAddress resolveAddress(@Nullable String peer, Function<String, @Nullable List<String>> headers) {
		return resolveAddress(InetAddresses.parseHop(peer), headers);
	}

	/**
	 * Returns the text of the rate limit key of the client of a connection, on any web stack: the client's
	 * network in canonical form ({@code 2001:db8:7:8::/64}, or {@code 203.0.113.7} when the prefix is the
	 * full length).
	 * @param peer the connection's peer as the server reports it
	 * @param headers as for {@link #resolveAddress(InetAddress, Function)}
	 * @return the network text; the trimmed peer (at most 64 characters) if it is not an IP literal; or
	 * {@code "unknown"} if there is none
	 */
	public String resolve(@Nullable String peer, Function<String, @Nullable List<String>> headers) {
		return key(resolveAddress(peer, headers), peer);
	}

	/**
	 * Returns an address or network an operator wrote (for the actuator) as {@link #resolve} keys it:
	 * canonical and cut to the configured prefix, so {@code ::ffff:203.0.113.7} is {@code 203.0.113.7}
	 * and {@code 2001:db8:7:8::1} or {@code 2001:0db8:7:8:0:0:0:0/64} is {@code 2001:db8:7:8::/64}.
	 * @param text an address, or a network whose prefix is the configured one
	 * @return the key text; {@code text} as it is when it is no IP literal or its prefix is another one
	 * (no key has it)
	 */
	public String network(String text) {
		int slash = text.indexOf('/');
		InetAddress address = InetAddresses.parse((slash < 0) ? text : text.substring(0, slash));
		if (address == null) {
			return text;
		}
		int prefix = (address.getAddress().length == 4) ? this.ipv4Prefix : this.ipv6Prefix;
		if (slash >= 0 && !text.substring(slash + 1).equals(Integer.toString(prefix))) {
			return text;
		}
		return InetAddresses.formatNetwork(address, this.ipv4Prefix, this.ipv6Prefix);
	}

	String key(@Nullable InetAddress address, @Nullable String peer) {
		if (address != null) {
			return InetAddresses.formatNetwork(address, this.ipv4Prefix, this.ipv6Prefix);
		}
		if (peer == null || peer.isBlank()) {
			return UNKNOWN;
		}
		// Set by the container (a Unix socket path, say), not by the client: usable as a key.
		String trimmed = peer.trim();
		return (trimmed.length() > MAX_RAW_REMOTE_LENGTH) ? trimmed.substring(0, MAX_RAW_REMOTE_LENGTH) : trimmed;
	}

	/**
	 * Returns the last {@value #MAX_HOPS} values of a header, all that a walk reads (every value holds at
	 * least one hop), dropping older ones as they come; a value that is not a string is empty.
	 * @param values the values, {@code null} when the container refuses access to headers
	 * @return the values, oldest first
	 */
	public static List<String> lastValues(@Nullable Enumeration<?> values) {
		if (values == null || !values.hasMoreElements()) {
			// The usual request, with no forwarding header: nothing to copy.
			return List.of();
		}
		ArrayDeque<String> last = new ArrayDeque<>();
		while (values.hasMoreElements()) {
			if (last.size() == MAX_HOPS) {
				last.removeFirst();
			}
			last.addLast((values.nextElement() instanceof String value) ? value : "");
		}
		return List.copyOf(last);
	}

	/**
	 * Returns the {@code X-Forwarded-For} entries, right-most first and at most {@value #MAX_HOPS}, without
	 * splitting a value (a header with thousands of commas costs no more) or copying an over-long entry,
	 * which is empty here: malformed.
	 */
	private static List<String> forwardedForHops(List<String> values) {
		List<String> hops = new ArrayList<>();
		for (int v = values.size() - 1; v >= 0; v--) {
			String value = Objects.requireNonNullElse(values.get(v), "");
			for (int end = value.length(); end >= 0; ) {
				if (hops.size() == MAX_HOPS) {
					return hops;
				}
				int comma = value.lastIndexOf(',', end - 1);
				int start = comma + 1;
				// Same whitespace rule as String.trim().
				while (start < end && value.charAt(start) <= ' ') {
					start++;
				}
				while (end > start && value.charAt(end - 1) <= ' ') {
					end--;
				}
				hops.add((end - start > InetAddresses.MAX_HOP_LENGTH) ? "" : value.substring(start, end));
				end = comma;
			}
		}
		return hops;
	}

	/** Whether a text is an RFC 9110 token, as header names are. */
	public static boolean isToken(@Nullable String text) {
		return text != null && TOKEN.matcher(text).matches();
	}

	/** What a request's walk of the forwarding header found, and from what. */
	record Walk(ClientIpResolver resolver, @Nullable String peer, @Nullable Object recorded,
			@Nullable InetAddress client) {
	}

	/** How the forwarding header is read: a list of hops, RFC 7239's elements, or one address. */
	private enum HeaderFormat { X_FORWARDED_FOR, FORWARDED, SINGLE }

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

		/** The proxies whose forwarding header is believed; empty (the default) to ignore forwarding headers. */
		public Builder trustedProxies(List<IpAddressRange> trustedProxies) {
			Assert.notNull(trustedProxies, "'trustedProxies' must not be null");
			Assert.noNullElements(trustedProxies, "'trustedProxies' must not contain null elements");
			this.trustedProxies = List.copyOf(trustedProxies);
			return this;
		}

		/** The forwarding header: {@code X-Forwarded-For} (the default), {@code Forwarded}, or one of one address. */
		public Builder header(String header) {
			Assert.isTrue(isToken(header), () -> "'" + header + "' is not an HTTP header name");
			this.header = header;
			return this;
		}

		/** The prefix IPv4 keys are cut to: 8-32; 32 (the default) keys each address. */
		public Builder ipv4Prefix(int ipv4Prefix) {
			Assert.isTrue(ipv4Prefix >= MIN_IPV4_PREFIX && ipv4Prefix <= 32, "'ipv4Prefix' must be between 8 and 32");
			this.ipv4Prefix = ipv4Prefix;
			return this;
		}

		/** The prefix IPv6 keys are cut to: 32-128; 64 (the default) keys each /64. */
		public Builder ipv6Prefix(int ipv6Prefix) {
			Assert.isTrue(ipv6Prefix >= MIN_IPV6_PREFIX && ipv6Prefix <= 128, "'ipv6Prefix' must be between 32 and 128");
			this.ipv6Prefix = ipv6Prefix;
			return this;
		}

		/** Whose resolution of the client address is taken. */
		public Builder source(ClientIpSource source) {
			Assert.notNull(source, "'source' must not be null");
			this.source = source;
			return this;
		}

		public ClientIpResolver build() {
			return new ClientIpResolver(this);
		}

	}

}
