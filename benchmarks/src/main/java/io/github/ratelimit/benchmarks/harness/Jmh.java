package io.github.ratelimit.benchmarks.harness;

import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.openjdk.jmh.results.BenchmarkResult;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import org.openjdk.jmh.runner.options.VerboseMode;

import io.github.ratelimit.benchmarks.DecisionBenchmark;
import io.github.ratelimit.benchmarks.report.Format;

/**
 * Runs {@link DecisionBenchmark} methods through JMH's API, one fork per method and parameter
 * combination (a fixed 2 GB heap, the default G1 collector), and turns the scores into
 * {@link Measurement}s.
 * <p>
 * Made for a shared machine: before each measurement it waits (a bounded time) for other processes to
 * leave the CPUs idle, it records how much CPU they took meanwhile and measures again (up to twice,
 * keeping the least disturbed) when that was over 20%, and a figure is the median of the measured
 * iterations, which a burst of foreign load in a few iterations does not move.
 */
public final class Jmh {

	/** Other processes' CPU share above which a measurement is taken again. */
	public static final double DISTURBED = 0.20;

	/**
	 * How many times a disturbed measurement is taken again; the least disturbed one is kept. The system
	 * property {@code benchmarks.repeats} sets another count (0 on a machine that is never idle, to keep a run
	 * short).
	 */
	public static final int MAX_REPEATS = Integer.getInteger("benchmarks.repeats", 2);

	/** Heap of each fork: fixed, so that heap sizing is not part of the measurement. */
	static final String[] JVM_ARGS = { "-Xms2g", "-Xmx2g" };

	private Jmh() {
	}

	/**
	 * How many forks per figure and implementation, and how long each warms up and measures.
	 *
	 * @param forks JVMs per figure and implementation (their iterations are pooled)
	 * @param warmups warm-up iterations of one second
	 * @param iterations measured iterations per fork
	 * @param iterationMillis length of a measured iteration
	 */
	public record Iterations(int forks, int warmups, int iterations, int iterationMillis) {

		public long seconds() {
			// A fork's JVM start and the set-up of up to a million keys take about two seconds.
			return this.forks * (this.warmups + (this.iterations * (long) this.iterationMillis) / 1000 + 2);
		}

		public String describe() {
			return this.forks + ((this.forks == 1) ? " fork" : " forks") + " per figure and implementation, each "
					+ this.warmups + " x 1 s warm-up, then " + this.iterations + " x " + this.iterationMillis
					+ " ms measured; the figure is the median measured iteration";
		}
	}

	/**
	 * One fork's outcome.
	 *
	 * @param method the benchmark method
	 * @param params the parameters it ran with
	 * @param threads the benchmark threads
	 * @param iterations the measured iterations' scores (ops/µs)
	 * @param foreignCpu the CPU share other processes took meanwhile
	 * @param repeats how many disturbed measurements came before this one
	 * @param unit the unit of the scores
	 */
	public record Fork(String method, Map<String, String> params, int threads, double[] iterations, double foreignCpu,
			int repeats, String unit) {

		/**
		 * Pools forks of one method and parameters: all their measured iterations, the most disturbed one's
		 * share of other processes' CPU, and their repeats.
		 * @param forks at least one fork, all of the same method, parameters, threads and unit
		 * @return one fork holding them all
		 */
		public static Fork pooled(List<Fork> forks) {
			Fork first = forks.get(0);
			double[] all = forks.stream().flatMapToDouble((fork) -> Arrays.stream(fork.iterations())).toArray();
			double foreign = forks.stream().mapToDouble(Fork::foreignCpu).max().orElse(Double.NaN);
			int repeats = forks.stream().mapToInt(Fork::repeats).sum();
			return new Fork(first.method(), first.params(), first.threads(), all, foreign, repeats, first.unit());
		}

		public Measurement measurement(String figure) {
			double[] sorted = this.iterations.clone();
			Arrays.sort(sorted);
			double halfIqr = (quantile(sorted, 0.75) - quantile(sorted, 0.25)) / 2;
			return new Measurement(figure, implementation(this.method), quantile(sorted, 0.5), halfIqr, this.unit,
					this.foreignCpu);
		}
	}

	/**
	 * Runs methods of {@link DecisionBenchmark}, each parameter combination in turn (all methods of one
	 * combination one after the other, so that they see the same machine).
	 * @param settings the run's settings (quick runs shorten every iteration)
	 * @param methods the benchmark methods, e.g. {@code ours}
	 * @param params JMH parameters, each with the values to run
	 * @param threads benchmark threads
	 * @param iterations warm-up and measurement
	 * @param log names the log file of JMH's own output
	 * @return the forks, in the order run
	 * @throws RunnerException when a benchmark fails
	 * @throws InterruptedException when interrupted while waiting for idle CPUs
	 */
	public static List<Fork> run(Settings settings, List<String> methods, Map<String, List<String>> params, int threads,
			Iterations iterations, String log) throws RunnerException, InterruptedException {
		return run(settings, DecisionBenchmark.class, "ops/µs", List.of(), methods, params, threads, iterations, log);
	}

	/**
	 * Runs methods of a benchmark class, each parameter combination in turn.
	 * @param settings the run's settings (quick runs shorten every iteration)
	 * @param benchmark the class that holds the methods
	 * @param unit the unit of its scores, as its {@code @OutputTimeUnit} makes them (e.g. {@code ops/s})
	 * @param jvmArgs more arguments of each fork's JVM
	 * @param methods the benchmark methods
	 * @param params JMH parameters, each with the values to run
	 * @param threads benchmark threads
	 * @param iterations warm-up and measurement
	 * @param log names the log file of JMH's own output
	 * @return the forks, in the order run
	 * @throws RunnerException when a benchmark fails
	 * @throws InterruptedException when interrupted while waiting for idle CPUs
	 */
	public static List<Fork> run(Settings settings, Class<?> benchmark, String unit, List<String> jvmArgs,
			List<String> methods, Map<String, List<String>> params, int threads, Iterations iterations, String log)
			throws RunnerException, InterruptedException {
		List<Fork> forks = new ArrayList<>();
		for (Map<String, String> combination : combinations(params)) {
			for (String method : methods) {
				Fork fork = null;
				for (int attempt = 0; attempt <= MAX_REPEATS; attempt++) {
					long waited = CpuMeter.awaitIdle(settings.quick() ? 0 : settings.maxIdleWaitSeconds());
					CpuMeter.Snapshot before = CpuMeter.snapshot();
					RunResult result = runOne(settings, benchmark, jvmArgs, method, combination, threads, iterations,
							log);
					double foreign = CpuMeter.foreignShare(before, CpuMeter.snapshot());
					Fork measured = new Fork(method, combination, threads, scores(result), foreign, attempt, unit);
					System.out.printf(Locale.ROOT, "  %-22s %-34s %2d thr  %8s %s  (other processes: %s CPU%s)%n",
							implementation(method), combination, threads,
							Format.number(measured.measurement("").value()), unit, CpuMeter.percent(foreign),
							(waited > 0) ? ", waited " + waited + " s for idle CPUs" : "");
					if (fork == null || !(measured.foreignCpu() >= fork.foreignCpu())) {
						fork = measured;
					}
					if (settings.quick() || !(foreign > DISTURBED) || attempt == MAX_REPEATS) {
						break;
					}
					System.out.println("    disturbed: measuring again");
				}
				forks.add(fork);
			}
		}
		return forks;
	}

	/**
	 * Says how many measurements had to be taken again, if any.
	 * @param forks the forks of a section
	 * @param section where the note goes
	 */
	public static void noteRepeats(List<Fork> forks, SectionResult section) {
		long repeated = forks.stream().filter((fork) -> fork.repeats() > 0).count();
		if (repeated > 0) {
			section.note(repeated + " of " + forks.size() + " measurements were taken again because other processes took more than "
					+ Math.round(DISTURBED * 100) + "% of the CPUs; the least disturbed one counts.");
		}
	}

	private static RunResult runOne(Settings settings, Class<?> benchmark, List<String> jvmArgs, String method,
			Map<String, String> params, int threads, Iterations iterations, String log) throws RunnerException {
		List<String> allJvmArgs = new ArrayList<>(List.of(JVM_ARGS));
		allJvmArgs.addAll(jvmArgs);
		ChainedOptionsBuilder options = new OptionsBuilder()
			.include(benchmark.getName() + "\\." + method + "$")
			.forks(settings.quick() ? 1 : iterations.forks())
			.threads(threads)
			.jvmArgs(allJvmArgs.toArray(new String[0]))
			.shouldFailOnError(true)
			.verbosity(VerboseMode.NORMAL);
		try {
			Files.createDirectories(settings.logDirectory());
			String name = "jmh-" + log + "-" + method + "-" + String.join("-", params.values()) + "-t" + threads + ".log";
			options.output(settings.logDirectory().resolve(name).toString());
		}
		catch (java.io.IOException ex) {
			// JMH prints to the console instead.
		}
		if (settings.quick()) {
			options.warmupIterations(1)
				.warmupTime(TimeValue.milliseconds(200))
				.measurementIterations(2)
				.measurementTime(TimeValue.milliseconds(200));
		}
		else {
			options.warmupIterations(iterations.warmups())
				.warmupTime(TimeValue.seconds(1))
				.measurementIterations(iterations.iterations())
				.measurementTime(TimeValue.milliseconds(iterations.iterationMillis()));
		}
		params.forEach(options::param);
		return new Runner(options.build()).runSingle();
	}

	private static double[] scores(RunResult result) {
		List<Double> scores = new ArrayList<>();
		for (BenchmarkResult fork : result.getBenchmarkResults()) {
			for (IterationResult iteration : fork.getIterationResults()) {
				scores.add(iteration.getPrimaryResult().getScore());
			}
		}
		return scores.stream().mapToDouble(Double::doubleValue).toArray();
	}

	public static List<Map<String, String>> combinations(Map<String, List<String>> params) {
		List<Map<String, String>> combinations = new ArrayList<>();
		combinations.add(new LinkedHashMap<>());
		for (Map.Entry<String, List<String>> param : params.entrySet()) {
			List<Map<String, String>> next = new ArrayList<>();
			for (Map<String, String> combination : combinations) {
				for (String value : param.getValue()) {
					Map<String, String> extended = new LinkedHashMap<>(combination);
					extended.put(param.getKey(), value);
					next.add(extended);
				}
			}
			combinations = next;
		}
		return combinations;
	}

	public static double quantile(double[] sorted, double q) {
		if (sorted.length == 0) {
			return Double.NaN;
		}
		double position = q * (sorted.length - 1);
		int lower = (int) Math.floor(position);
		int upper = (int) Math.ceil(position);
		return sorted[lower] + (sorted[upper] - sorted[lower]) * (position - lower);
	}

	/**
	 * Names a benchmark method's implementation as the tables do.
	 * @param method the method
	 * @return e.g. {@code Bucket4j}
	 */
	public static String implementation(String method) {
		return switch (method) {
			case "ours" -> "ours";
			case "oursTokenBucketOnly" -> "ours: bucket only";
			case "bucket4j" -> "Bucket4j";
			case "floor" -> "floor";
			case "floorExpiring" -> "floor: expiring cache";
			case "raw" -> "raw EVALSHA";
			case "oursUncoalesced" -> "ours, coalescing off";
			default -> method;
		};
	}
}
