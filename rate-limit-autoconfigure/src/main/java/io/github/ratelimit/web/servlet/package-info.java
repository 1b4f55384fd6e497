/**
 * The servlet stack, internal: the exchange of one request and its adapters (the filter and the
 * interceptor), the limiter that decides its checks, response headers, the rejection log, metrics, the
 * servlet container's checks, and the configuration that builds the pipeline
 * ({@code RateLimitServletConfiguration}, imported by
 * {@link io.github.ratelimit.autoconfigure.RateLimitAutoConfiguration}). Everything here is
 * package-private but that configuration; policies, keys and client IPs are in
 * {@link io.github.ratelimit.web.policy}, {@link io.github.ratelimit.web.key} and
 * {@link io.github.ratelimit.web.clientip}, the extension points in {@link io.github.ratelimit.web}.
 */
@NullMarked
package io.github.ratelimit.web.servlet;

import org.jspecify.annotations.NullMarked;
