package io.github.ratelimit.benchmarks.harness;

import org.jspecify.annotations.Nullable;

/**
 * Ours next to a peer on one figure: the ratio {@code ours / peer}, and the target it should meet, if
 * any.
 *
 * @param figure the figure both were measured on
 * @param ours the implementation that is ours, as named in the measurements
 * @param peer the implementation compared with
 * @param ratio {@code ours / peer}
 * @param target what the ratio should be, or {@code null} when the comparison is for information
 */
public record Comparison(String figure, String ours, String peer, double ratio, @Nullable Target target) {

	/**
	 * Returns whether the target is met.
	 * @return {@code true} when met or when there is no target
	 */
	public boolean met() {
		return this.target == null || this.target.isMetBy(this.ratio);
	}

	/**
	 * What a ratio should be.
	 *
	 * @param atLeast whether the ratio should be at least (or else at most) the bound
	 * @param bound the bound
	 */
	public record Target(boolean atLeast, double bound) {

		/**
		 * A ratio of at least {@code bound}.
		 * @param bound the bound
		 * @return the target
		 */
		public static Target atLeast(double bound) {
			return new Target(true, bound);
		}

		/**
		 * A ratio of at most {@code bound}.
		 * @param bound the bound
		 * @return the target
		 */
		public static Target atMost(double bound) {
			return new Target(false, bound);
		}

		boolean isMetBy(double ratio) {
			return this.atLeast ? ratio >= this.bound : ratio <= this.bound;
		}

		@Override
		public String toString() {
			return (this.atLeast ? ">= " : "<= ") + java.math.BigDecimal.valueOf(this.bound).stripTrailingZeros().toPlainString();
		}
	}
}
