/**
 * The implementations the benchmarks measure besides ours, each behind an adapter: in process, ours
 * ({@link io.github.ratelimit.benchmarks.peers.OursLimiter}), Bucket4j
 * ({@link io.github.ratelimit.benchmarks.peers.Bucket4jLimiter}) and the floor
 * ({@link io.github.ratelimit.benchmarks.peers.FloorLimiter}), on the same
 * {@link io.github.ratelimit.benchmarks.peers.Policy}; on Redis, Bucket4j's Lettuce proxy manager
 * ({@link io.github.ratelimit.benchmarks.peers.Bucket4jRedisLimiter}) and the raw {@code EVALSHA} ceiling
 * ({@link io.github.ratelimit.benchmarks.peers.RawEvalshaLimiter}).
 */
@NullMarked
package io.github.ratelimit.benchmarks.peers;

import org.jspecify.annotations.NullMarked;
