/**
 * Spring Cloud Gateway Server MVC: the {@code RateLimited} route filter
 * ({@link io.github.ratelimit.gateway.mvc.RateLimitedFilterFunctions}, the API of this package) and its
 * auto-configuration; the rest is package-private.
 */
@NullMarked
package io.github.ratelimit.gateway.mvc;

import org.jspecify.annotations.NullMarked;
