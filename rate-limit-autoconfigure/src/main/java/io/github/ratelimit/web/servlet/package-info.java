/**
 * The servlet stack, internal: the exchange of one request and its adapters (the filter and the
 * interceptor), the servlet request as the limiter reads it, holding a request for its turn, the servlet
 * container's checks, and the configuration that builds the pipeline
 * ({@code RateLimitServletConfiguration}, imported by
 * {@link io.github.ratelimit.autoconfigure.RateLimitAutoConfiguration}). Everything here is
 * package-private but that configuration and the request view; deciding is in
 * {@link io.github.ratelimit.web.limiter}, policies, keys and client IPs in
 * {@link io.github.ratelimit.web.policy}, {@link io.github.ratelimit.web.key} and
 * {@link io.github.ratelimit.web.clientip}, the extension points in {@link io.github.ratelimit.web}.
 */
@NullMarked
package io.github.ratelimit.web.servlet;

import org.jspecify.annotations.NullMarked;
