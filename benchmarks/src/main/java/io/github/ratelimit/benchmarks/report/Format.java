package io.github.ratelimit.benchmarks.report;

import java.util.Locale;

/**
 * Formats numbers for tables: three significant digits, no exponent.
 */
public final class Format {

	private Format() {
	}

	public static String number(double value) {
		if (Double.isNaN(value)) {
			return "-";
		}
		double magnitude = Math.abs(value);
		if (magnitude >= 1000) {
			return String.format(Locale.ROOT, "%,.0f", value);
		}
		if (magnitude >= 100) {
			return String.format(Locale.ROOT, "%.0f", value);
		}
		if (magnitude >= 10) {
			return String.format(Locale.ROOT, "%.1f", value);
		}
		return String.format(Locale.ROOT, "%.2f", value);
	}
}
