/**
 * Benchmarks of the rate limiter against named peers: JMH decision throughput and scaling, retained
 * heap per key, and the HTTP overhead of the filter. {@link io.github.ratelimit.benchmarks.BenchmarkRunner}
 * runs them all and writes the results, a table and a chart; {@code benchmarks/run.sh} is the command.
 * <p>
 * Each peer sits behind an adapter ({@link io.github.ratelimit.benchmarks.OursLimiter},
 * {@link io.github.ratelimit.benchmarks.Bucket4jLimiter}, {@link io.github.ratelimit.benchmarks.FloorLimiter})
 * so that every implementation is measured through the same harness, on the same keys.
 */
@NullMarked
package io.github.ratelimit.benchmarks;

import org.jspecify.annotations.NullMarked;
