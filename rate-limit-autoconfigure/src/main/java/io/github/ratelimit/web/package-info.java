/**
 * The servlet side of the rate limiter: the filter, {@link io.github.ratelimit.web.RateLimited},
 * policies and their resolution, keys, client IPs, response headers and rejections.
 */
@NullMarked
package io.github.ratelimit.web;

import org.jspecify.annotations.NullMarked;
