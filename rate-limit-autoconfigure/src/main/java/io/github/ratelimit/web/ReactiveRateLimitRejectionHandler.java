package io.github.ratelimit.web;

import reactor.core.publisher.Mono;

import org.springframework.web.server.ServerWebExchange;

/**
 * Writes the response of a rejected request on WebFlux, as {@link RateLimitRejectionHandler} does on Spring
 * MVC. Without one, the starter answers {@code 429} with an RFC 9457 problem written with the application's
 * codecs; declare a bean of this type to answer otherwise. When it is called, the response's status is
 * {@code 429} and its rate limit headers, {@code Retry-After} and {@code Cache-Control: no-store} are set.
 * Implementations must be thread-safe and must not block.
 */
@FunctionalInterface
public interface ReactiveRateLimitRejectionHandler {

	/**
	 * Writes the rejection.
	 * @param exchange the rejected request's exchange, its response not yet committed
	 * @param result what the limits decided
	 * @return completes once the response is written
	 */
	Mono<Void> reject(ServerWebExchange exchange, RateLimitResult result);

}
