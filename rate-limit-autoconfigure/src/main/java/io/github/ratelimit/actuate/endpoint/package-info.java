/**
 * The {@code ratelimits} actuator endpoint: the policies in force, and runtime changes to them.
 */
@NullMarked
package io.github.ratelimit.actuate.endpoint;

import org.jspecify.annotations.NullMarked;
