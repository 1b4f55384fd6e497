/**
 * Delayed requests that wait without a thread: parked with the Servlet async API and resumed by the
 * timer, through a running Tomcat.
 */
@NullMarked
package io.github.ratelimit.parked;

import org.jspecify.annotations.NullMarked;
