/**
 * The in-process store, on Caffeine.
 */
@NullMarked
package io.github.ratelimit.core.caffeine;

import org.jspecify.annotations.NullMarked;
