/**
 * Slowing failed logins down before the lockout ({@code slow-down}), through a running server.
 */
@NullMarked
package io.github.ratelimit.slowdown;

import org.jspecify.annotations.NullMarked;
