/**
 * For the tests of applications that use the rate limiter: {@link io.github.ratelimit.test.ManualClock},
 * a clock a test advances instead of sleeping, and
 * {@link io.github.ratelimit.test.ResetRateLimitsTestExecutionListener}, which makes every budget whole
 * again after each Spring test ({@link io.github.ratelimit.test.KeepRateLimits} turns it off for a
 * test class).
 */
@NullMarked
package io.github.ratelimit.test;

import org.jspecify.annotations.NullMarked;
