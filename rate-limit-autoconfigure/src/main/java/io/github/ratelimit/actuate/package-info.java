/**
 * The {@code ratelimits} actuator endpoint.
 */
@NullMarked
package io.github.ratelimit.actuate;

import org.jspecify.annotations.NullMarked;
