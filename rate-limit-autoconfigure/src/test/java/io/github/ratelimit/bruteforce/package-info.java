/**
 * The brute-force defence through a running server: slowing failed logins down before the lockout
 * ({@code slow-down}), and banning a key that keeps running into it ({@code ban}).
 */
@NullMarked
package io.github.ratelimit.bruteforce;

import org.jspecify.annotations.NullMarked;
