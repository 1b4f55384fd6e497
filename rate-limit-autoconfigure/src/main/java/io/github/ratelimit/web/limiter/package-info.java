/**
 * Deciding a request, the same on every web stack, internal: the limiter that decides a request's
 * policies into checks in one store call ({@code RequestLimiter}), one request's checks as its phases add
 * them ({@code RequestChecks}), the result they render ({@code RequestDecision}), the response headers,
 * the rejection log and metrics. A web stack's adapter ({@link io.github.ratelimit.web.servlet}, or the
 * reactive one) does the I/O around them. Types public across the starter's packages are not API.
 */
@NullMarked
package io.github.ratelimit.web.limiter;

import org.jspecify.annotations.NullMarked;
