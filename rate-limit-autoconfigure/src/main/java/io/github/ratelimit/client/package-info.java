/**
 * The client side: a {@link io.github.ratelimit.client.RetryAfterInterceptor} that lets
 * {@code RestClient} and {@code RestTemplate} callers of rate-limited APIs retry {@code 429} (and
 * {@code 503} with {@code Retry-After}) within bounds, honouring {@code Retry-After}.
 */
@NullMarked
package io.github.ratelimit.client;

import org.jspecify.annotations.NullMarked;
