package io.github.ratelimit.web.policy;

import java.net.InetAddress;
import java.util.List;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.core.RateLimitConfigurationException;
import io.github.ratelimit.web.clientip.IpAddressRange;
import io.github.ratelimit.web.key.KeyResolvers;
import io.github.ratelimit.web.key.LimitedRequest;
import io.github.ratelimit.web.key.RequestCondition;

/**
 * The requests no policy limits ({@code rate-limit.exempt}): those whose resolved client IP is in one of
 * the given ranges (IPv4 and IPv6), and those for which a SpEL condition holds. An exempt request
 * spends nothing and carries no rate limit header; a condition that throws cannot tell, and the request
 * is refused ({@link io.github.ratelimit.web.key.UnreadableRequestException}), unless only shadow policies apply to it. Immutable and
 * thread-safe.
 */
public final class RateLimitExemptions {

	/** Exempts nobody. */
	public static final RateLimitExemptions NONE = new RateLimitExemptions(List.of(), null);

	private final List<IpAddressRange> ips;

	private final @Nullable RequestCondition when;

	private RateLimitExemptions(List<IpAddressRange> ips, @Nullable RequestCondition when) {
		this.ips = List.copyOf(ips);
		this.when = when;
	}

	/**
	 * Creates the exemptions.
	 * @param ips client IP ranges that are never limited
	 * @param when a SpEL boolean over the root of key expressions, or {@code null}
	 * @param keyResolvers parses the condition
	 * @param whenOrigin the condition's property, for error messages
	 * @return the exemptions
	 * @throws RateLimitConfigurationException when the condition does not parse
	 */
	static RateLimitExemptions of(List<IpAddressRange> ips, @Nullable String when, KeyResolvers keyResolvers,
			String whenOrigin) {
		RequestCondition condition = (when != null && !when.isBlank()) ? keyResolvers.condition(when, whenOrigin)
				: null;
		if (ips.isEmpty() && condition == null) {
			return NONE;
		}
		return new RateLimitExemptions(ips, condition);
	}

	/**
	 * Tells whether a request is exempt from every policy.
	 * @param request the request
	 * @return {@code true} when its client IP is exempt or the condition holds
	 * @throws io.github.ratelimit.web.key.UnreadableRequestException when the condition throws
	 */
	public boolean isExempt(LimitedRequest request) {
		return (!this.ips.isEmpty() && hasExemptIp(request)) || (this.when != null && this.when.test(request));
	}

	private boolean hasExemptIp(LimitedRequest request) {
		// The connection's peer as Tomcat writes it (127.0.0.1): compared as bits, not parsed.
		long ipv4 = request.clientIpv4Bits();
		if (ipv4 >= 0) {
			for (int i = 0; i < this.ips.size(); i++) {
				if (this.ips.get(i).containsIpv4((int) ipv4)) {
					return true;
				}
			}
			return false;
		}
		// The client's own address, not the network its key is made of (an IPv6 client's /64).
		InetAddress client = request.clientAddress();
		return client != null && this.ips.stream().anyMatch((range) -> range.contains(client));
	}
}
