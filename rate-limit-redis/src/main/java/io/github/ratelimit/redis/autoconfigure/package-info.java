/**
 * Auto-configuration of the Redis store for Spring Boot: {@code rate-limit.store.type=redis} on the
 * application's Spring Data Redis connection factory.
 */
@NullMarked
package io.github.ratelimit.redis.autoconfigure;

import org.jspecify.annotations.NullMarked;
