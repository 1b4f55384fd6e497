package io.github.ratelimit.benchmarks.harness;

/**
 * One measured figure of one implementation.
 *
 * @param figure what was measured, e.g. {@code 1 key, allowed}
 * @param implementation who was measured, e.g. {@code ours}, {@code Bucket4j}
 * @param value the score
 * @param error how far the score may be off (for JMH: half the interquartile range of the measured
 * iterations), or {@code NaN} when unknown
 * @param unit the score's unit, e.g. {@code ops/µs}
 * @param foreignCpu the share of the machine's CPU that other processes used meanwhile (0 to 1), or
 * {@code NaN} when unknown
 */
public record Measurement(String figure, String implementation, double value, double error, String unit,
		double foreignCpu) {

	/**
	 * Creates a measurement without a record of other processes' CPU use.
	 * @param figure what was measured
	 * @param implementation who was measured
	 * @param value the score
	 * @param error the error estimate, or {@code NaN}
	 * @param unit the unit
	 */
	public Measurement(String figure, String implementation, double value, double error, String unit) {
		this(figure, implementation, value, error, unit, Double.NaN);
	}

	/**
	 * Creates a measurement without an error estimate.
	 * @param figure what was measured
	 * @param implementation who was measured
	 * @param value the score
	 * @param unit the unit
	 */
	public Measurement(String figure, String implementation, double value, String unit) {
		this(figure, implementation, value, Double.NaN, unit, Double.NaN);
	}
}
