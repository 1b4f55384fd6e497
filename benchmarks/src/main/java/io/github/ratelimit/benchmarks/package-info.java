/**
 * Benchmarks of the rate limiter against named peers: JMH decision throughput and scaling, retained
 * heap per key, Redis decisions and memory, and the HTTP overhead of the filter.
 * {@link io.github.ratelimit.benchmarks.BenchmarkRunner} runs them all and writes the results, a table and a
 * chart; {@code benchmarks/run.sh} is the command.
 * <p>
 * This package holds the JMH benchmarks and the sections that run them; the implementations measured sit
 * behind adapters in {@code peers}, what runs and records the measurements in {@code harness}, and what a
 * run writes (tables, JSON, chart) in {@code report}.
 */
@NullMarked
package io.github.ratelimit.benchmarks;

import org.jspecify.annotations.NullMarked;
