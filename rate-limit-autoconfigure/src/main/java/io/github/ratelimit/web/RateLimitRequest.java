package io.github.ratelimit.web;

import java.security.Principal;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * A request as the rate limiter sees it, the same on every web stack: what a {@link RequestKeyResolver}
 * reads to find whose budget a request spends, and what a rejection is written for. Read-only; valid
 * while the request is decided.
 */
public interface RateLimitRequest {

	/**
	 * Returns the request's method.
	 * @return e.g. {@code GET}
	 */
	String method();

	/**
	 * Returns the path within the application (without the context path), as the client sent it
	 * (percent-encoded).
	 * @return e.g. {@code /api/orders/7}
	 */
	String path();

	/**
	 * Returns a header's first value.
	 * @param name the header's name, in any case
	 * @return the value, or {@code null} when the request has none
	 */
	@Nullable String header(String name);

	/**
	 * Returns every value of a header, one per line the client sent.
	 * @param name the header's name, in any case
	 * @return the values; empty when the request has none
	 */
	List<String> headers(String name);

	/**
	 * Returns a parameter's first value: of the query string, or of a form body.
	 * @param name the parameter
	 * @return the value, or {@code null} when the request has none
	 * @throws RuntimeException when the request's parameters cannot be decoded: the request is then
	 * refused with {@code 400}, as for a {@code param:} key (catching it does not help: the read is
	 * remembered)
	 */
	@Nullable String parameter(String name);

	/**
	 * Returns the authenticated user, e.g. Spring Security's.
	 * @return the principal, or {@code null} when the request has none
	 */
	@Nullable Principal principal();

	/**
	 * Returns the client's IP address as the limiter keys it: the connection's peer, or the forwarding
	 * header's client when the peer is a trusted proxy ({@code rate-limit.client-ip.*}).
	 * @return the address, IPv6 by its network when so configured
	 */
	String clientIp();

	/**
	 * Returns the web stack's own request, for what this view does not carry.
	 * @param type e.g. {@code jakarta.servlet.http.HttpServletRequest} on Spring MVC
	 * @param <T> the type
	 * @return the request as that type, or {@code null} when it is not one
	 */
	<T> @Nullable T unwrap(Class<T> type);

}
