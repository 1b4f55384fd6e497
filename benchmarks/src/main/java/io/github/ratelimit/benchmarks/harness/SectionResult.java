package io.github.ratelimit.benchmarks.harness;

import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * What one {@link Section} measured: figures per implementation, the ratios of ours to the peers, and
 * notes on how (or why not) it measured. Not thread-safe; filled by one section, then read.
 */
public final class SectionResult {

	private final List<Measurement> measurements = new ArrayList<>();

	private final List<Comparison> comparisons = new ArrayList<>();

	private final List<String> notes = new ArrayList<>();

	/**
	 * Adds a measurement.
	 * @param measurement the measurement
	 * @return this result
	 */
	public SectionResult add(Measurement measurement) {
		this.measurements.add(measurement);
		return this;
	}

	/**
	 * Adds a note, shown under the section's table.
	 * @param note one sentence
	 * @return this result
	 */
	public SectionResult note(String note) {
		this.notes.add(note);
		return this;
	}

	/**
	 * Compares ours with a peer on a figure both were measured on; does nothing when either is missing.
	 * @param figure the figure
	 * @param ours our implementation's name
	 * @param peer the peer's name
	 * @param target what the ratio should be, or {@code null}
	 * @return this result
	 */
	public SectionResult compare(String figure, String ours, String peer, Comparison.@Nullable Target target) {
		Measurement a = find(figure, ours);
		Measurement b = find(figure, peer);
		if (a != null && b != null && b.value() != 0) {
			this.comparisons.add(new Comparison(figure, ours, peer, a.value() / b.value(), target));
		}
		return this;
	}

	/**
	 * Finds a measurement.
	 * @param figure the figure
	 * @param implementation the implementation
	 * @return the measurement, or {@code null}
	 */
	public @Nullable Measurement find(String figure, String implementation) {
		for (Measurement measurement : this.measurements) {
			if (measurement.figure().equals(figure) && measurement.implementation().equals(implementation)) {
				return measurement;
			}
		}
		return null;
	}

	public List<Measurement> measurements() {
		return this.measurements;
	}

	public List<Comparison> comparisons() {
		return this.comparisons;
	}

	public List<String> notes() {
		return this.notes;
	}

	/**
	 * Returns the figures in the order they were first measured.
	 * @return distinct figure names
	 */
	public List<String> figures() {
		return this.measurements.stream().map(Measurement::figure).distinct().toList();
	}

	/**
	 * Returns the implementations in the order they were first measured.
	 * @return distinct implementation names
	 */
	public List<String> implementations() {
		return this.measurements.stream().map(Measurement::implementation).distinct().toList();
	}
}
