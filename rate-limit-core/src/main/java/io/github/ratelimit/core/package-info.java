/**
 * The rate limiting engine: limits, algorithms, decisions, the store SPI and an injectable clock.
 * Plain Java with no Spring dependency; every type states whether it is thread-safe.
 */
@NullMarked
package io.github.ratelimit.core;

import org.jspecify.annotations.NullMarked;
