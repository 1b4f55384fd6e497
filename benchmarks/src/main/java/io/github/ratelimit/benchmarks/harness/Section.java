package io.github.ratelimit.benchmarks.harness;

/**
 * One part of the benchmark run: measures a set of figures of ours and of its peers, in the same run.
 * <p>
 * {@link BenchmarkRunner} runs the sections it knows in order and puts each one's figures in the results
 * file, the table and the chart. A new part (e.g. the Redis store against Bucket4j on Lettuce and a raw
 * {@code EVALSHA} loop) is a new implementation of this interface added to
 * {@link BenchmarkRunner#SECTIONS}; nothing else needs to change.
 */
public interface Section {

	/**
	 * Returns the name used to select the section on the command line.
	 * @return e.g. {@code local}
	 */
	String id();

	/**
	 * Returns the heading of the section's table.
	 * @return e.g. {@code Local decisions}
	 */
	String title();

	/**
	 * Returns how the section measures, in a sentence or two (shown under its table).
	 * @return the method
	 */
	String method();

	/**
	 * Estimates the section's running time, to tell the user what to expect.
	 * @param settings the run's settings
	 * @return seconds
	 */
	long estimatedSeconds(Settings settings);

	/**
	 * Measures.
	 * @param settings the run's settings
	 * @return the figures, comparisons and notes
	 * @throws Exception when the section cannot measure; the run goes on with the other sections
	 */
	SectionResult run(Settings settings) throws Exception;
}
