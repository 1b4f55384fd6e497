/**
 * The implementations the benchmarks measure, each behind an adapter with the same shape: ours
 * ({@link io.github.ratelimit.benchmarks.peers.OursLimiter}), Bucket4j
 * ({@link io.github.ratelimit.benchmarks.peers.Bucket4jLimiter}) and the floor
 * ({@link io.github.ratelimit.benchmarks.peers.FloorLimiter}), on the same
 * {@link io.github.ratelimit.benchmarks.peers.Policy}.
 */
@NullMarked
package io.github.ratelimit.benchmarks.peers;

import org.jspecify.annotations.NullMarked;
