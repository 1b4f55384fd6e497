/**
 * The servlet pipeline, internal: the filter and the interceptor, policies and their resolution, keys,
 * client IPs, response headers, the rejection log, metrics and the actuator endpoint, with the
 * configuration that builds them ({@code RateLimitServletConfiguration}, imported by
 * {@link io.github.ratelimit.autoconfigure.RateLimitAutoConfiguration}). Everything here is
 * package-private but the endpoint, which the actuator reads; the extension points are in
 * {@link io.github.ratelimit.web}.
 */
@NullMarked
package io.github.ratelimit.web.servlet;

import org.jspecify.annotations.NullMarked;
