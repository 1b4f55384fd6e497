/**
 * Spring Cloud Gateway on WebFlux: the {@code RateLimited} route filter
 * ({@link io.github.ratelimit.gateway.RateLimitedGatewayFilterFactory}, the API of this package) and its
 * auto-configuration; the rest is package-private.
 */
@NullMarked
package io.github.ratelimit.gateway;

import org.jspecify.annotations.NullMarked;
