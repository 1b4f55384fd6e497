/**
 * The WebFlux stack, internal: the exchange of one request and its adapters (the web filter and the handler
 * adapter), the exchange as the limiter reads it, the problems it answers with, and the configuration that
 * builds the pipeline ({@code RateLimitReactiveConfiguration}, imported by
 * {@link io.github.ratelimit.autoconfigure.RateLimitWebFluxAutoConfiguration}). Deciding is in
 * {@link io.github.ratelimit.web.limiter}, as for the servlet stack. Everything here is package-private but
 * that configuration.
 */
@NullMarked
package io.github.ratelimit.web.reactive;

import org.jspecify.annotations.NullMarked;
