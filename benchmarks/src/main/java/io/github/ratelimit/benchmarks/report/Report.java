package io.github.ratelimit.benchmarks.report;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.benchmarks.harness.Comparison;
import io.github.ratelimit.benchmarks.harness.CpuMeter;
import io.github.ratelimit.benchmarks.harness.Jmh;
import io.github.ratelimit.benchmarks.harness.Measurement;
import io.github.ratelimit.benchmarks.harness.SectionOutcome;
import io.github.ratelimit.benchmarks.harness.SectionResult;

/**
 * Writes a run's figures as tables (console and Markdown); {@link ResultsFile} writes them as JSON.
 */
public final class Report {

	private Report() {
	}

	/**
	 * Renders every section as a table: one row per figure, one column per implementation, then one
	 * column per ratio ours/peer, marked with whether it meets its target.
	 * @param outcomes the sections' outcomes
	 * @param markdown Markdown tables, or else aligned plain text
	 * @return the tables
	 */
	public static String tables(List<SectionOutcome> outcomes, boolean markdown) {
		StringBuilder out = new StringBuilder();
		for (SectionOutcome outcome : outcomes) {
			out.append(markdown ? "#### " : "== ").append(outcome.section().title()).append(markdown ? "\n\n" : " ==\n");
			SectionResult result = outcome.result();
			if (result == null) {
				out.append("Not measured: ").append(outcome.failure()).append("\n\n");
				continue;
			}
			List<List<String>> rows = grid(result);
			out.append(markdown ? markdown(rows) : aligned(rows));
			String interference = interference(result);
			if (interference != null) {
				out.append(markdown ? "" : "  ").append(interference).append('\n');
			}
			for (String note : result.notes()) {
				out.append(markdown ? "" : "  ").append(note).append(markdown ? "\n" : "\n");
			}
			if (markdown) {
				out.append("\nMethod: ").append(outcome.section().method()).append('\n');
			}
			out.append('\n');
		}
		return out.toString();
	}

	/** Sums up how much CPU other processes took while the section measured, when known. */
	public static String interference(SectionResult result) {
		List<Measurement> known = result.measurements().stream().filter((m) -> !Double.isNaN(m.foreignCpu())).toList();
		if (known.isEmpty()) {
			return null;
		}
		double[] shares = known.stream().mapToDouble(Measurement::foreignCpu).sorted().toArray();
		Measurement worst = known.stream().max(java.util.Comparator.comparingDouble(Measurement::foreignCpu)).orElseThrow();
		return "Other processes took " + CpuMeter.percent(Jmh.quantile(shares, 0.5)) + " of the CPUs (median over "
				+ shares.length + " measurements), at worst " + CpuMeter.percent(worst.foreignCpu()) + " (" + worst.figure()
				+ ", " + worst.implementation() + ").";
	}

	public static List<List<String>> grid(SectionResult result) {
		List<String> implementations = result.implementations();
		Map<String, Comparison.Target> ratioColumns = new LinkedHashMap<>();
		for (Comparison comparison : result.comparisons()) {
			ratioColumns.putIfAbsent(comparison.ours() + "/" + comparison.peer(), comparison.target());
		}
		List<List<String>> rows = new ArrayList<>();
		List<String> header = new ArrayList<>(List.of("figure", "unit"));
		header.addAll(implementations);
		ratioColumns.forEach((name, target) -> header.add(name + ((target != null) ? " (" + target + ")" : "")));
		rows.add(header);
		for (String figure : result.figures()) {
			List<String> row = new ArrayList<>();
			row.add(figure);
			row.add(result.measurements().stream().filter((m) -> m.figure().equals(figure)).findFirst().orElseThrow().unit());
			for (String implementation : implementations) {
				Measurement measurement = result.find(figure, implementation);
				row.add((measurement != null) ? value(measurement) : "");
			}
			for (String column : ratioColumns.keySet()) {
				row.add(result.comparisons()
					.stream()
					.filter((c) -> c.figure().equals(figure) && column.equals(c.ours() + "/" + c.peer()))
					.findFirst()
					.map((c) -> ratio(c, ratioColumns.get(column)))
					.orElse(""));
			}
			rows.add(row);
		}
		return rows;
	}

	private static String value(Measurement measurement) {
		String value = Format.number(measurement.value());
		if (!Double.isNaN(measurement.error()) && measurement.value() != 0) {
			value += String.format(Locale.ROOT, " ±%.0f%%", 100 * measurement.error() / measurement.value());
		}
		return value;
	}

	/** A ratio, marked against its target; a target other than its column's is named in the cell. */
	private static String ratio(Comparison comparison, Comparison.@Nullable Target column) {
		String ratio = String.format(Locale.ROOT, "%.2f", comparison.ratio());
		if (comparison.target() == null) {
			return ratio;
		}
		String own = comparison.target().equals(column) ? "" : " (" + comparison.target() + ")";
		return ratio + (comparison.met() ? " ✓" : " ✗") + own;
	}

	private static String aligned(List<List<String>> rows) {
		int[] widths = new int[rows.get(0).size()];
		for (List<String> row : rows) {
			for (int i = 0; i < row.size(); i++) {
				widths[i] = Math.max(widths[i], row.get(i).length());
			}
		}
		StringBuilder out = new StringBuilder();
		for (List<String> row : rows) {
			out.append(' ');
			for (int i = 0; i < row.size(); i++) {
				String cell = row.get(i);
				out.append(' ');
				if (i == 0) {
					out.append(cell).append(" ".repeat(widths[i] - cell.length()));
				}
				else {
					out.append(" ".repeat(widths[i] - cell.length())).append(cell);
				}
				out.append(' ');
			}
			out.append('\n');
		}
		return out.toString();
	}

	private static String markdown(List<List<String>> rows) {
		StringBuilder out = new StringBuilder();
		for (int r = 0; r < rows.size(); r++) {
			out.append("| ").append(String.join(" | ", rows.get(r))).append(" |\n");
			if (r == 0) {
				out.append("|");
				for (int i = 0; i < rows.get(0).size(); i++) {
					out.append(i == 0 ? " --- |" : " ---: |");
				}
				out.append('\n');
			}
		}
		return out.append('\n').toString();
	}
}
