package io.github.ratelimit.benchmarks.harness;

import java.nio.file.Path;

/**
 * How a run measures and where it writes.
 *
 * @param quick short iterations, to check that everything runs (the figures mean little)
 * @param resultsDirectory where the results file goes, e.g. {@code benchmarks/results}
 * @param chart where the chart goes, e.g. {@code docs/benchmarks.png}
 * @param logDirectory where logs of child processes go
 * @param sampleAppJar the sample app's executable jar, for the HTTP section
 * @param reactiveSampleAppJar the reactive sample app's executable jar, for the reactive HTTP section
 * @param maxIdleWaitSeconds how long to wait at most, before each measurement, for other processes to
 * leave the CPUs idle; 0 never waits
 */
public record Settings(boolean quick, Path resultsDirectory, Path chart, Path logDirectory, Path sampleAppJar,
		Path reactiveSampleAppJar, long maxIdleWaitSeconds) {
}
