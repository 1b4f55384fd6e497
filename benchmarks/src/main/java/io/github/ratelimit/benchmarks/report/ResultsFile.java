package io.github.ratelimit.benchmarks.report;

import java.io.IOException;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.annotation.JsonInclude;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.util.DefaultPrettyPrinter;
import tools.jackson.core.util.Separators;
import tools.jackson.databind.MapperFeature;
import tools.jackson.databind.ObjectWriter;
import tools.jackson.databind.json.JsonMapper;

import io.github.ratelimit.benchmarks.harness.Comparison;
import io.github.ratelimit.benchmarks.harness.Measurement;
import io.github.ratelimit.benchmarks.harness.Section;
import io.github.ratelimit.benchmarks.harness.SectionOutcome;
import io.github.ratelimit.benchmarks.harness.SectionResult;
import io.github.ratelimit.benchmarks.harness.Settings;

/**
 * {@code results.json}: a run's environment and, per section, its measurements, comparisons and notes
 * (or why it could not measure). Written with Jackson, and read back by the {@code report} command to draw
 * the chart again without measuring. Numbers carry four decimals; a figure that is not a number
 * ({@code NaN}) is {@code null}.
 */
public final class ResultsFile {

	private static final JsonMapper MAPPER = JsonMapper.builder()
		.disable(MapperFeature.SORT_PROPERTIES_ALPHABETICALLY)
		.build();

	/** Indented, {@code "name": value} as the files written before Jackson had it. */
	private static final ObjectWriter WRITER = MAPPER.writer().with(new DefaultPrettyPrinter(
			Separators.createDefaultInstance().withObjectNameValueSpacing(Separators.Spacing.AFTER)));

	private ResultsFile() {
	}

	/**
	 * Renders a run as JSON.
	 * @param environment where and when it ran
	 * @param outcomes the sections' outcomes
	 * @return a JSON document
	 */
	public static String json(Map<String, String> environment, List<SectionOutcome> outcomes) {
		List<SectionJson> sections = new ArrayList<>();
		for (SectionOutcome outcome : outcomes) {
			Section section = outcome.section();
			SectionResult result = outcome.result();
			if (result == null) {
				sections.add(new SectionJson(section.id(), section.title(), section.method(), outcome.seconds(),
						String.valueOf(outcome.failure()), null, null, null));
				continue;
			}
			List<MeasurementJson> measurements = result.measurements()
				.stream()
				.map((m) -> new MeasurementJson(m.figure(), m.implementation(), round(m.value()), round(m.error()),
						m.unit(), round(m.foreignCpu())))
				.toList();
			List<ComparisonJson> comparisons = result.comparisons()
				.stream()
				.map((c) -> new ComparisonJson(c.figure(), c.ours(), c.peer(), round(c.ratio()),
						(c.target() != null) ? c.target().toString() : null, (c.target() != null) ? c.met() : null))
				.toList();
			List<String> notes = new ArrayList<>();
			String interference = Report.interference(result);
			if (interference != null) {
				notes.add(interference);
			}
			notes.addAll(result.notes());
			sections.add(new SectionJson(section.id(), section.title(), section.method(), outcome.seconds(), null,
					measurements, comparisons, notes));
		}
		return WRITER.writeValueAsString(new RunJson(environment, sections)) + "\n";
	}

	/**
	 * Reads a results file back.
	 * @param file e.g. {@code benchmarks/results/results.json}
	 * @return the run it records
	 * @throws IOException when it cannot be read
	 */
	public static Recorded read(Path file) throws IOException {
		RunJson run;
		try {
			run = MAPPER.readValue(file.toFile(), RunJson.class);
		}
		catch (tools.jackson.core.JacksonException ex) {
			throw new IOException("Cannot read " + file + ": " + ex.getOriginalMessage(), ex);
		}
		List<SectionOutcome> outcomes = new ArrayList<>();
		for (SectionJson section : run.sections()) {
			RecordedSection recorded = new RecordedSection(section.id(), section.title(), section.method());
			if (section.measurements() == null) {
				outcomes.add(new SectionOutcome(recorded, null, section.failure(), section.seconds()));
				continue;
			}
			SectionResult result = new SectionResult();
			for (MeasurementJson m : section.measurements()) {
				result.add(new Measurement(m.figure(), m.implementation(), number(m.value()), number(m.error()), m.unit(),
						number(m.foreignCpu())));
			}
			for (ComparisonJson c : orEmpty(section.comparisons())) {
				// From the measurements again: a ratio rounded twice (here, then to two decimals) may round the other way.
				result.compare(c.figure(), c.ours(), c.peer(), target(c.target()));
			}
			List<String> notes = orEmpty(section.notes());
			// json() wrote the interference first, when there was one; it is derived from the measurements again.
			boolean interference = Report.interference(result) != null;
			notes.stream().skip((interference && !notes.isEmpty()) ? 1 : 0).forEach(result::note);
			outcomes.add(new SectionOutcome(recorded, result, null, section.seconds()));
		}
		return new Recorded(new LinkedHashMap<>(run.environment()), outcomes);
	}

	private static <T> List<T> orEmpty(@Nullable List<T> list) {
		return (list != null) ? list : List.of();
	}

	private static @Nullable Double round(double value) {
		if (Double.isNaN(value) || Double.isInfinite(value)) {
			return null;
		}
		return BigDecimal.valueOf(value).setScale(4, RoundingMode.HALF_UP).doubleValue();
	}

	private static double number(@Nullable Double value) {
		return (value != null) ? value : Double.NaN;
	}

	private static Comparison.@Nullable Target target(@Nullable String target) {
		if (target == null) {
			return null;
		}
		double bound = Double.parseDouble(target.substring(3));
		return target.startsWith(">=") ? Comparison.Target.atLeast(bound) : Comparison.Target.atMost(bound);
	}

	/**
	 * A run read back from its results file.
	 *
	 * @param environment where and when it ran
	 * @param outcomes its sections, as recorded
	 */
	public record Recorded(Map<String, String> environment, List<SectionOutcome> outcomes) {
	}

	/** A section as its results file names it; it cannot run again. */
	private record RecordedSection(String id, String title, String method) implements Section {

		@Override
		public long estimatedSeconds(Settings settings) {
			return 0;
		}

		@Override
		public SectionResult run(Settings settings) {
			throw new UnsupportedOperationException("Recorded in a results file: " + this.id);
		}
	}

	private record RunJson(Map<String, String> environment, List<SectionJson> sections) {
	}

	@JsonInclude(JsonInclude.Include.NON_NULL)
	private record SectionJson(String id, String title, String method, long seconds, @Nullable String failure,
			@Nullable List<MeasurementJson> measurements, @Nullable List<ComparisonJson> comparisons,
			@Nullable List<String> notes) {
	}

	private record MeasurementJson(String figure, String implementation, @Nullable Double value,
			@Nullable Double error, String unit, @Nullable Double foreignCpu) {
	}

	private record ComparisonJson(String figure, String ours, String peer, @Nullable Double ratio,
			@Nullable String target, @Nullable Boolean met) {
	}
}
