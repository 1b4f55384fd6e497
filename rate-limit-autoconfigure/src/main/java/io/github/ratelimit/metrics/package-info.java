/**
 * Micrometer metrics of the rate limiter.
 */
@NullMarked
package io.github.ratelimit.metrics;

import org.jspecify.annotations.NullMarked;
