/**
 * Auto-configuration of the rate limiter: properties, beans, and the start-up failure analysis.
 */
@NullMarked
package io.github.ratelimit.autoconfigure;

import org.jspecify.annotations.NullMarked;
