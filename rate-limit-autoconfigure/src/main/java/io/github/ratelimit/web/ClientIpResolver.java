package io.github.ratelimit.web;

import java.net.InetAddress;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Enumeration;
import java.util.Iterator;
import java.util.List;

import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;

/**
 * Works out the IP address of the client that sent a request, in a canonical text form suitable
 * as a rate limit key. Immutable and thread-safe.
 *
 * <p>The client is {@link HttpServletRequest#getRemoteAddr()}, unless that address is one of the
 * configured trusted proxies. Only then is {@code X-Forwarded-For} read: all instances of the
 * header, in order, form one list of hops, walked from the right (the hop the nearest proxy
 * appended) towards the left. The first hop that is not a trusted proxy is the client. The walk
 * stops at the first malformed or empty hop, and the last valid address seen wins, because
 * anything to the left of garbage cannot be attributed to a trusted proxy. If every hop is
 * trusted, the left-most valid one is the client. The left-most entry, which the client writes
 * itself, is therefore never believed on its own, and with no trusted proxies (the default)
 * forwarding headers are ignored entirely.
 *
 * <p>The work is bounded whatever the header holds: at most the right-most
 * {@value #MAX_HOPS} hops are considered, no DNS lookup is ever made, and no header content makes
 * {@link #resolve(HttpServletRequest)} throw. The result is normalised (RFC 5952 for IPv6,
 * IPv4-mapped IPv6 as IPv4) so that one client always gets the same key.
 */
public final class ClientIpResolver {

	/** The header read from trusted proxies. */
	public static final String X_FORWARDED_FOR = "X-Forwarded-For";

	/** The most hops considered, counted from the right. */
	public static final int MAX_HOPS = 64;

	/** Returned when the container gives no remote address. */
	static final String UNKNOWN = "unknown";

	/** The longest unparsable remote address returned as is. */
	private static final int MAX_RAW_REMOTE_LENGTH = 64;

	private final List<IpAddressRange> trustedProxies;

	/**
	 * Creates a resolver.
	 * @param trustedProxies the address ranges of proxies whose {@code X-Forwarded-For} entries
	 * are believed; empty to ignore forwarding headers
	 */
	public ClientIpResolver(List<IpAddressRange> trustedProxies) {
		Assert.notNull(trustedProxies, "'trustedProxies' must not be null");
		Assert.noNullElements(trustedProxies, "'trustedProxies' must not contain null elements");
		this.trustedProxies = List.copyOf(trustedProxies);
	}

	/**
	 * Returns the trusted proxy ranges.
	 * @return an unmodifiable list, possibly empty
	 */
	public List<IpAddressRange> getTrustedProxies() {
		return this.trustedProxies;
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
	 * Returns the client IP address of a request, normalised.
	 * @param request the request
	 * @return the client address in canonical form; the trimmed remote address (at most 64
	 * characters) if the container reports one that is not an IP
	 * literal; or {@code "unknown"} if it reports none
	 */
	public String resolve(HttpServletRequest request) {
		String remoteAddr = request.getRemoteAddr();
		if (remoteAddr == null || remoteAddr.isBlank()) {
			return UNKNOWN;
		}
		InetAddress remote = InetAddresses.parse(remoteAddr);
		if (remote == null) {
			// Set by the container (a Unix socket path, say), not by the client: usable as a key.
			String trimmed = remoteAddr.trim();
			return (trimmed.length() > MAX_RAW_REMOTE_LENGTH) ? trimmed.substring(0, MAX_RAW_REMOTE_LENGTH) : trimmed;
		}
		if (this.trustedProxies.isEmpty() || !isTrusted(remote)) {
			return InetAddresses.format(remote);
		}
		return InetAddresses.format(walkForwardedFor(request, remote));
	}

	private InetAddress walkForwardedFor(HttpServletRequest request, InetAddress remote) {
		Deque<String> values = lastHeaderValues(request);
		InetAddress candidate = remote;
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

	/**
	 * Returns the last header values that can hold the right-most {@link #MAX_HOPS} hops: every
	 * value holds at least one hop, so older ones are dropped as they arrive.
	 */
	private static Deque<String> lastHeaderValues(HttpServletRequest request) {
		Deque<String> values = new ArrayDeque<>();
		Enumeration<String> headers = request.getHeaders(X_FORWARDED_FOR);
		if (headers == null) {
			// The container may refuse access to headers.
			return values;
		}
		while (headers.hasMoreElements()) {
			String value = headers.nextElement();
			if (values.size() == MAX_HOPS) {
				values.removeFirst();
			}
			values.addLast((value != null) ? value : "");
		}
		return values;
	}

	/**
	 * Parses {@code value[start, end)} as an address, without copying an over-long entry.
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
		if (end == start || end - start > InetAddresses.MAX_LITERAL_LENGTH) {
			return null;
		}
		return InetAddresses.parse(value.substring(start, end));
	}

}
