package io.github.ratelimit.benchmarks.harness;

import java.net.URI;
import java.time.Duration;

/**
 * Sends GET requests to one URI on a fixed number of keep-alive connections, each connection sending
 * its next request as soon as the previous one is answered (a closed loop), for a fixed time.
 */
public interface LoadGenerator {

	/** Connections kept busy at once. */
	int CONNECTIONS = 16;

	/**
	 * Returns what generates the load, for the results.
	 * @return e.g. {@code wrk 4.1.0}
	 */
	String name();

	/**
	 * Generates load.
	 * @param uri what to request
	 * @param duration for how long
	 * @return what was achieved
	 * @throws Exception when the load cannot be generated
	 */
	LoadResult run(URI uri, Duration duration) throws Exception;

	/**
	 * Picks wrk when it is installed, else the generator on the JDK's HttpClient.
	 * @return a generator
	 */
	static LoadGenerator best() {
		LoadGenerator wrk = WrkLoadGenerator.ifInstalled();
		return (wrk != null) ? wrk : new JdkLoadGenerator();
	}

	/**
	 * What one load run achieved.
	 *
	 * @param requests responses received
	 * @param seconds how long the run took
	 * @param failures responses that were not 2xx, plus connection errors
	 * @param p50Millis median latency
	 * @param p99Millis 99th percentile latency
	 * @param output what the generator printed, for the log
	 */
	record LoadResult(long requests, double seconds, long failures, double p50Millis, double p99Millis,
			String output) {

		public LoadResult(long requests, double seconds, long failures, double p50Millis, double p99Millis) {
			this(requests, seconds, failures, p50Millis, p99Millis, "");
		}

		public double requestsPerSecond() {
			return this.requests / this.seconds;
		}
	}
}
