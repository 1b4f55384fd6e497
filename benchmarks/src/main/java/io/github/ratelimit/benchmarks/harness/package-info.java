/**
 * What runs and records the measurements: the {@link io.github.ratelimit.benchmarks.harness.Section}
 * contract and its results, JMH forks, the CPU meter, HTTP load generators, and the processes a run
 * starts (the sample app; {@code redis-server} comes from {@code rate-limit-test-support}'s
 * {@code RedisProcess}).
 */
@NullMarked
package io.github.ratelimit.benchmarks.harness;

import org.jspecify.annotations.NullMarked;
