/**
 * The Redis store: limiter state shared by every instance of an application, decided by one atomic
 * Lua script call per request on Spring Data Redis' {@code RedisConnectionFactory}.
 */
@NullMarked
package io.github.ratelimit.redis;

import org.jspecify.annotations.NullMarked;
