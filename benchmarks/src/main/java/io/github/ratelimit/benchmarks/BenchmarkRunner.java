package io.github.ratelimit.benchmarks;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import io.github.ratelimit.benchmarks.harness.Section;
import io.github.ratelimit.benchmarks.harness.SectionOutcome;
import io.github.ratelimit.benchmarks.harness.SectionResult;
import io.github.ratelimit.benchmarks.harness.Settings;
import io.github.ratelimit.benchmarks.report.Chart;
import io.github.ratelimit.benchmarks.report.Report;
import io.github.ratelimit.benchmarks.report.ResultsFile;

/**
 * Runs every benchmark section, then writes {@code benchmarks/results/results.json} and
 * {@code results.md}, prints the tables (each figure next to the peers', with the ratios ours/peer)
 * and draws {@code docs/benchmarks.png}. Run from the repository root, as {@code benchmarks/run.sh}
 * does.
 * <p>
 * Options: {@code --quick} (short iterations, to check that everything runs), {@code --only=local,http}
 * (sections by id: {@code local}, {@code keys}, {@code threads}, {@code redis}, {@code memory}, {@code http},
 * {@code http-reactive}), {@code --results=DIR}, {@code --chart=FILE}, {@code --sample-app=JAR},
 * {@code --sample-reactive-app=JAR}, {@code --max-idle-wait=SECONDS}
 * (how long to wait before each measurement for other processes to leave the CPUs idle; default 30,
 * 0 never waits). {@code jmh ARGS...} runs JMH's
 * own command line instead (e.g. {@code jmh DecisionBenchmark.ours -p keys=1 -prof jfr}).
 * {@code report [--results=DIR] [--chart=FILE]} measures nothing: it reads {@code DIR/results.json} back,
 * prints its tables and draws its chart again.
 */
public final class BenchmarkRunner {

	/** Every section, in the order they run. */
	static final List<Supplier<Section>> SECTIONS = List.of(LocalDecisionSection::new, ScalingSection::byKeys,
			ScalingSection::byThreads, RedisDecisionSection::new, MemorySection::new, HttpOverheadSection::servlet,
			HttpOverheadSection::reactive);

	private BenchmarkRunner() {
	}

	public static void main(String[] args) throws Exception {
		if (args.length > 0 && args[0].equals("jmh")) {
			org.openjdk.jmh.Main.main(Arrays.copyOfRange(args, 1, args.length));
			return;
		}
		if (args.length > 0 && args[0].equals("report")) {
			Map<String, String> options = options(Arrays.copyOfRange(args, 1, args.length));
			report(Path.of(options.getOrDefault("results", "benchmarks/results")),
					Path.of(options.getOrDefault("chart", "docs/benchmarks.png")));
			return;
		}
		Map<String, String> options = options(args);
		Path results = Path.of(options.getOrDefault("results", "benchmarks/results"));
		Settings settings = new Settings(options.containsKey("quick"), results,
				Path.of(options.getOrDefault("chart", "docs/benchmarks.png")), Path.of("benchmarks/target/logs"),
				options.containsKey("sample-app") ? Path.of(options.get("sample-app")) : sampleAppJar("sample-app"),
				options.containsKey("sample-reactive-app") ? Path.of(options.get("sample-reactive-app"))
						: sampleAppJar("sample-reactive-app"),
				Long.parseLong(options.getOrDefault("max-idle-wait", "30")));
		List<String> only = options.containsKey("only") ? List.of(options.get("only").split(",")) : List.of();
		List<Section> sections = new ArrayList<>();
		for (Supplier<Section> section : SECTIONS) {
			Section candidate = section.get();
			if (only.isEmpty() || only.contains(candidate.id())) {
				sections.add(candidate);
			}
		}
		System.exit(run(settings, sections) ? 0 : 1);
	}

	/**
	 * Runs sections and writes their results, table and chart.
	 * @param settings the run's settings
	 * @param sections the sections to run
	 * @return whether every section measured
	 * @throws IOException when the results cannot be written
	 */
	static boolean run(Settings settings, List<Section> sections) throws IOException {
		Map<String, String> environment = environment(settings);
		long estimate = sections.stream().mapToLong((s) -> s.estimatedSeconds(settings)).sum();
		System.out.printf(Locale.ROOT, "Running %d sections (%s), about %d min%s.%n", sections.size(),
				String.join(", ", sections.stream().map(Section::id).toList()), Math.max(1, Math.round(estimate / 60.0)),
				settings.quick() ? ", quick: the figures mean little" : "");
		List<SectionOutcome> outcomes = new ArrayList<>();
		for (Section section : sections) {
			System.out.printf(Locale.ROOT, "%n>>> %s (about %d s)%n", section.title(), section.estimatedSeconds(settings));
			long start = System.nanoTime();
			SectionResult result = null;
			String failure = null;
			try {
				result = section.run(settings);
			}
			catch (Exception ex) {
				failure = ex.getClass().getSimpleName() + ": " + ex.getMessage();
				System.out.println("!!! " + section.id() + " could not measure: " + failure);
				ex.printStackTrace(System.out);
			}
			outcomes.add(new SectionOutcome(section, result, failure, TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start)));
		}
		environment.put("finished", Instant.now().truncatedTo(ChronoUnit.SECONDS).toString());
		write(settings, environment, outcomes);
		return outcomes.stream().allMatch((o) -> o.result() != null);
	}

	private static void write(Settings settings, Map<String, String> environment, List<SectionOutcome> outcomes)
			throws IOException {
		Files.createDirectories(settings.resultsDirectory());
		Path json = settings.resultsDirectory().resolve("results.json");
		Files.writeString(json, ResultsFile.json(environment, outcomes), StandardCharsets.UTF_8);
		Path markdown = settings.resultsDirectory().resolve("results.md");
		StringBuilder md = new StringBuilder("### Benchmark results\n\n");
		environment.forEach((key, value) -> md.append("- ").append(key).append(": ").append(value).append('\n'));
		md.append('\n').append(Report.tables(outcomes, true));
		Files.writeString(markdown, md.toString(), StandardCharsets.UTF_8);
		Chart.render(outcomes, subtitle(environment), settings.chart());
		System.out.println();
		System.out.println(Report.tables(outcomes, false));
		System.out.println("Results: " + json + ", " + markdown + "; chart: " + settings.chart());
	}

	/**
	 * Draws the chart of a recorded run again and prints its tables; measures nothing.
	 * @param results the directory of its {@code results.json}
	 * @param chart where the chart goes
	 * @throws IOException when the results cannot be read or the chart written
	 */
	static void report(Path results, Path chart) throws IOException {
		ResultsFile.Recorded run = ResultsFile.read(results.resolve("results.json"));
		Chart.render(run.outcomes(), subtitle(run.environment()), chart);
		System.out.println(Report.tables(run.outcomes(), false));
		System.out.println("Chart: " + chart);
	}

	private static String subtitle(Map<String, String> environment) {
		return environment.get("started") + " - " + environment.get("cpu") + ", " + environment.get("cores")
				+ " cores - " + environment.get("java") + " - commit " + environment.get("commit")
				+ (Boolean.parseBoolean(environment.get("quick")) ? " - QUICK RUN" : "");
	}

	private static Map<String, String> environment(Settings settings) {
		Map<String, String> environment = new LinkedHashMap<>();
		environment.put("started", Instant.now().truncatedTo(ChronoUnit.SECONDS).toString());
		environment.put("commit", command("git", "rev-parse", "--short", "HEAD"));
		environment.put("cpu", cpuModel());
		environment.put("cores", Integer.toString(Runtime.getRuntime().availableProcessors()));
		environment.put("memory", String.format(Locale.ROOT, "%.0f GB", totalMemoryGb()));
		environment.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version"));
		environment.put("java", System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"));
		environment.put("quick", Boolean.toString(settings.quick()));
		environment.put("loadAverageAtStart", loadAverage());
		return environment;
	}

	private static Map<String, String> options(String[] args) {
		Map<String, String> options = new LinkedHashMap<>();
		for (String arg : args) {
			if (!arg.startsWith("--")) {
				throw new IllegalArgumentException("Unknown argument " + arg + "; see the javadoc of BenchmarkRunner");
			}
			int equals = arg.indexOf('=');
			options.put((equals > 0) ? arg.substring(2, equals) : arg.substring(2),
					(equals > 0) ? arg.substring(equals + 1) : "");
		}
		return options;
	}

	private static Path sampleAppJar(String module) {
		Path target = Path.of(module, "target");
		if (Files.isDirectory(target)) {
			try (DirectoryStream<Path> jars = Files.newDirectoryStream(target, module + "-[0-9]*.jar")) {
				for (Path jar : jars) {
					// The executable jar, not the test jar beside it.
					if (!jar.getFileName().toString().endsWith("-tests.jar")) {
						return jar;
					}
				}
			}
			catch (IOException ex) {
				// Reported when the HTTP section runs.
			}
		}
		return target.resolve(module + ".jar");
	}

	private static String loadAverage() {
		double load = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
		return (load < 0) ? "unknown" : String.format(Locale.ROOT, "%.2f", load);
	}

	private static String cpuModel() {
		try {
			for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
				if (line.startsWith("model name")) {
					return line.substring(line.indexOf(':') + 1).trim();
				}
			}
		}
		catch (IOException ex) {
			// Not Linux.
		}
		return System.getProperty("os.arch");
	}

	private static double totalMemoryGb() {
		if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
			return os.getTotalMemorySize() / 1e9;
		}
		return Double.NaN;
	}

	private static String command(String... command) {
		try {
			Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
			String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
			return (process.waitFor() == 0) ? output : "unknown";
		}
		catch (IOException ex) {
			return "unknown";
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return "unknown";
		}
	}
}
