package io.github.ratelimit.benchmarks;

import java.io.IOException;
import java.io.InputStream;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;
import java.util.function.ToDoubleFunction;

import io.github.ratelimit.benchmarks.harness.Comparison;
import io.github.ratelimit.benchmarks.harness.CpuMeter;
import io.github.ratelimit.benchmarks.harness.Jmh;
import io.github.ratelimit.benchmarks.harness.LoadGenerator;
import io.github.ratelimit.benchmarks.harness.Measurement;
import io.github.ratelimit.benchmarks.harness.SampleApp;
import io.github.ratelimit.benchmarks.harness.Section;
import io.github.ratelimit.benchmarks.harness.SectionResult;
import io.github.ratelimit.benchmarks.harness.Settings;
import io.github.ratelimit.benchmarks.report.Format;

/**
 * The HTTP overhead of the limiter: a sample app with one rule whose policy allows every request,
 * against the same app with {@code --rate-limit.enabled=false}, both loaded on loopback with
 * {@code GET /api/hello}; once for {@code sample-app} (Spring MVC on Tomcat) and once for
 * {@code sample-reactive-app} (WebFlux on Reactor Netty). Both apps run at once and are loaded in turn, in
 * alternating order, so that drift in the machine's load falls on both sides alike. Both are warmed up until
 * their CPU time per request has settled: the first windows after a fixed short warm-up measured the JIT
 * still compiling the limiter's path (the app with the limiter has more to compile), not the limiter.
 */
public final class HttpOverheadSection implements Section {

	static final String PATH = "/api/hello";

	public static final String ENABLED = "rate limit on";

	public static final String DISABLED = "rate limit off";

	/** The app process's CPU time per request served. */
	public static final String CPU_PER_REQUEST = "CPU per request";

	private final String id;

	private final String stack;

	private final String module;

	private final Function<Settings, Path> jar;

	private final LoadGenerator generator;

	private HttpOverheadSection(String id, String stack, String module, Function<Settings, Path> jar) {
		this.id = id;
		this.stack = stack;
		this.module = module;
		this.jar = jar;
		this.generator = LoadGenerator.best();
	}

	/** The servlet sample, on Tomcat. */
	public static HttpOverheadSection servlet() {
		return new HttpOverheadSection("http", "Spring MVC on Tomcat", "sample-app", Settings::sampleAppJar);
	}

	/** The reactive sample, on Reactor Netty. */
	public static HttpOverheadSection reactive() {
		return new HttpOverheadSection("http-reactive", "WebFlux on Reactor Netty", "sample-reactive-app",
				Settings::reactiveSampleAppJar);
	}

	/**
	 * Warm-up rounds of {@code warmup} per app, at least {@code minWarmupRounds} and until both apps'
	 * CPU time per request has settled (at most {@code maxWarmupRounds}); then {@code rounds} measured
	 * windows per app.
	 */
	private record Plan(int minWarmupRounds, int maxWarmupRounds, Duration warmup, int rounds, Duration window) {

		long seconds() {
			return 2 * ((this.minWarmupRounds + this.maxWarmupRounds) / 2 * this.warmup.toSeconds()
					+ this.rounds * this.window.toSeconds()) + 15;
		}
	}

	/** Two warm-up rounds whose CPU time per request differs by less than this have settled. */
	static final double SETTLED = 0.05;

	/**
	 * A warm-up round in which the JIT compiler threads took less than this share of the app's CPU time has
	 * compiled the request path: an app still compiling pays for it in every figure.
	 */
	static final double COMPILED = 0.03;

	private static Plan plan(boolean quick) {
		return quick ? new Plan(1, 1, Duration.ofSeconds(2), 1, Duration.ofSeconds(3))
				: new Plan(5, 16, Duration.ofSeconds(6), 5, Duration.ofSeconds(6));
	}

	/**
	 * One load window of one app.
	 * @param load what the load generator measured
	 * @param cpuMicrosPerRequest the app process's CPU time during the window (every thread: requests, JIT,
	 * GC) divided by the requests it served, or {@code NaN} when unknown
	 * @param compilerShare the share of that CPU time its JIT compiler threads took, or {@code NaN} when unknown
	 */
	public record Window(LoadGenerator.LoadResult load, double cpuMicrosPerRequest, double compilerShare) {

		/**
		 * Creates a window without a compiler share.
		 * @param load what the load generator measured
		 * @param cpuMicrosPerRequest the app's CPU time per request
		 */
		public Window(LoadGenerator.LoadResult load, double cpuMicrosPerRequest) {
			this(load, cpuMicrosPerRequest, Double.NaN);
		}

		/**
		 * Creates a window without a CPU time.
		 * @param load what the load generator measured
		 */
		public Window(LoadGenerator.LoadResult load) {
			this(load, Double.NaN);
		}

		static Window of(LoadGenerator.LoadResult load, long cpuNanosBefore, long cpuNanosAfter, long compilerNanosBefore,
				long compilerNanosAfter) {
			boolean known = cpuNanosBefore >= 0 && cpuNanosAfter > cpuNanosBefore && load.requests() > 0;
			boolean compilerKnown = known && compilerNanosBefore >= 0 && compilerNanosAfter >= compilerNanosBefore;
			return new Window(load, known ? (cpuNanosAfter - cpuNanosBefore) / 1000.0 / load.requests() : Double.NaN,
					compilerKnown ? (double) (compilerNanosAfter - compilerNanosBefore) / (cpuNanosAfter - cpuNanosBefore)
							: Double.NaN);
		}
	}

	@Override
	public String id() {
		return this.id;
	}

	@Override
	public String title() {
		return "HTTP overhead: " + this.module + " (" + this.stack + "), GET " + PATH + ", loopback";
	}

	@Override
	public String method() {
		Plan plan = plan(false);
		return this.generator.name() + "; both apps (" + String.join(" ", SampleApp.JVM_ARGS) + ") warmed up in turn, "
				+ plan.warmup().toSeconds() + " s each per round, " + plan.minWarmupRounds() + " to "
				+ plan.maxWarmupRounds() + " rounds, until in both apps the JIT compiler threads take less than "
				+ Math.round(COMPILED * 100) + "% of the round's CPU time (the JIT has compiled the request path) and the "
				+ "CPU time per request changes by less than " + Math.round(SETTLED * 100)
				+ "% from one round to the next; "
				+ "then " + plan.rounds() + " windows of " + plan.window().toSeconds()
				+ " s each, alternating which goes first. Every figure is the median of the windows (± half their "
				+ "interquartile range); CPU per request is the app process's CPU time (all threads) divided by the "
				+ "requests it served, which other load on the machine does not change as it changes throughput. "
				+ "The load generator shares the 2 cores with the server.";
	}

	@Override
	public long estimatedSeconds(Settings settings) {
		return plan(settings.quick()).seconds();
	}

	@Override
	public SectionResult run(Settings settings) throws Exception {
		Path jar = this.jar.apply(settings);
		if (!Files.isRegularFile(jar)) {
			throw new IllegalStateException("No " + this.module + " jar at " + jar + "; build it with: mvn -B -q package -pl "
					+ this.module + " -am -DskipTests");
		}
		Path allowAll = Files.createTempFile("rate-limit-allow-all", ".yml");
		try (InputStream yml = HttpOverheadSection.class.getResourceAsStream("/allow-all.yml")) {
			Files.copy(yml, allowAll, StandardCopyOption.REPLACE_EXISTING);
		}
		String config = "--spring.config.additional-location=file:" + allowAll.toAbsolutePath();
		Plan plan = plan(settings.quick());
		try (SampleApp enabled = SampleApp.start(jar, this.id + "-enabled", settings.logDirectory(), List.of(config));
				SampleApp disabled = SampleApp.start(jar, this.id + "-disabled", settings.logDirectory(),
						List.of(config, "--rate-limit.enabled=false"))) {
			enabled.awaitReady(Duration.ofSeconds(90));
			disabled.awaitReady(Duration.ofSeconds(90));
			check(enabled.get(PATH), true);
			check(disabled.get(PATH), false);
			List<Double> warmOn = new ArrayList<>();
			List<Double> warmOff = new ArrayList<>();
			List<Double> compilingOn = new ArrayList<>();
			List<Double> compilingOff = new ArrayList<>();
			for (int i = 0; i < plan.maxWarmupRounds(); i++) {
				for (SampleApp app : (i % 2 == 0) ? List.of(enabled, disabled) : List.of(disabled, enabled)) {
					Window window = measure(app, plan.warmup());
					(app == enabled ? warmOn : warmOff).add(window.cpuMicrosPerRequest());
					(app == enabled ? compilingOn : compilingOff).add(window.compilerShare());
					log(settings, "warm-up " + name(app, enabled), window, Double.NaN);
				}
				if (i + 1 >= plan.minWarmupRounds() && warmedUp(warmOn, compilingOn) && warmedUp(warmOff, compilingOff)) {
					break;
				}
			}
			List<Window> on = new ArrayList<>();
			List<Window> off = new ArrayList<>();
			List<Double> foreign = new ArrayList<>();
			for (int i = 0; i < plan.rounds(); i++) {
				boolean enabledFirst = (i % 2 == 0);
				for (SampleApp app : enabledFirst ? List.of(enabled, disabled) : List.of(disabled, enabled)) {
					Window window = null;
					double share = Double.NaN;
					for (int attempt = 0; attempt <= Jmh.MAX_REPEATS; attempt++) {
						CpuMeter.awaitIdle(settings.quick() ? 0 : settings.maxIdleWaitSeconds());
						CpuMeter.Snapshot before = CpuMeter.snapshot();
						Window measured = measure(app, plan.window());
						double measuredShare = CpuMeter.foreignShare(before, CpuMeter.snapshot());
						log(settings, name(app, enabled), measured, measuredShare);
						if (window == null || !(measuredShare >= share)) {
							window = measured;
							share = measuredShare;
						}
						if (settings.quick() || !(measuredShare > Jmh.DISTURBED)) {
							break;
						}
						System.out.println("    disturbed: measuring again");
					}
					foreign.add(share);
					(app == enabled ? on : off).add(window);
				}
			}
			SectionResult result = result(on, off);
			boolean settled = warmedUp(warmOn, compilingOn) && warmedUp(warmOff, compilingOff);
			result.note("Warm-up: " + warmOn.size() + " rounds of " + plan.warmup().toSeconds() + " s per app, "
					+ (settled ? "settled" : "NOT settled (the windows include JIT compilation; measure again)")
					+ "; CPU µs per request per round, on: " + micros(warmOn) + "; off: " + micros(warmOff)
					+ "; the JIT compiler's share of the CPU time per round, on: " + percents(compilingOn) + "; off: "
					+ percents(compilingOff) + ".");
			result.note("The JIT compiler's share of the CPU time in the measured windows, on: "
					+ percents(on.stream().map(Window::compilerShare).toList()) + "; off: "
					+ percents(off.stream().map(Window::compilerShare).toList()) + ".");
			result.note("Other processes took " + String.join(", ", foreign.stream().map(CpuMeter::percent).toList())
					+ " of the CPUs during the windows.");
			return result;
		}
		finally {
			Files.deleteIfExists(allowAll);
		}
	}

	private Window measure(SampleApp app, Duration duration) throws Exception {
		long compilerBefore = app.compilerCpuNanos();
		long before = app.cpuNanos();
		LoadGenerator.LoadResult load = this.generator.run(app.uri(PATH), duration);
		long after = app.cpuNanos();
		return Window.of(load, before, after, compilerBefore, app.compilerCpuNanos());
	}

	/**
	 * Whether an app has warmed up: its JIT compiler took less than {@link #COMPILED} of the last round's CPU
	 * time (or that is unknown), and its CPU time per request has {@linkplain #settled settled}.
	 * @param cpuMicrosPerRequest the rounds so far
	 * @param compilerShares the compiler's share of each round's CPU time
	 * @return whether warming up may stop
	 */
	static boolean warmedUp(List<Double> cpuMicrosPerRequest, List<Double> compilerShares) {
		double last = compilerShares.isEmpty() ? Double.NaN : compilerShares.get(compilerShares.size() - 1);
		return !(last >= COMPILED) && settled(cpuMicrosPerRequest);
	}

	private static String percents(List<Double> shares) {
		return String.join(", ", shares.stream()
			.map((share) -> Double.isNaN(share) ? "unknown" : String.format(Locale.ROOT, "%.1f%%", share * 100))
			.toList());
	}

	private static String name(SampleApp app, SampleApp enabled) {
		return (app == enabled) ? ENABLED : DISABLED;
	}

	private void log(Settings settings, String name, Window window, double foreignShare) throws IOException {
		LoadGenerator.LoadResult load = window.load();
		Files.writeString(settings.logDirectory().resolve(this.id + "-windows.log"),
				name + "\n" + load + " cpuMicrosPerRequest=" + window.cpuMicrosPerRequest() + " compilerShare="
						+ window.compilerShare() + "\n" + load.output() + "\n",
				StandardOpenOption.CREATE, StandardOpenOption.APPEND);
		System.out.printf(Locale.ROOT, "  %-23s %8s req/s  %6.1f µs CPU per request  p99 %6.2f ms  JIT %s%s%n", name,
				Format.number(load.requestsPerSecond()), window.cpuMicrosPerRequest(), load.p99Millis(),
				percents(List.of(window.compilerShare())),
				Double.isNaN(foreignShare) ? "" : "  (other processes: " + CpuMeter.percent(foreignShare) + " CPU)");
	}

	/**
	 * Whether the last two warm-up rounds' CPU time per request differ by less than {@link #SETTLED};
	 * {@code true} when the CPU time is not known (then the least rounds are run).
	 * @param cpuMicrosPerRequest the rounds so far
	 * @return whether warming up may stop
	 */
	static boolean settled(List<Double> cpuMicrosPerRequest) {
		int n = cpuMicrosPerRequest.size();
		if (n == 0 || Double.isNaN(cpuMicrosPerRequest.get(n - 1))) {
			return true;
		}
		if (n < 2) {
			return false;
		}
		double last = cpuMicrosPerRequest.get(n - 1);
		double previous = cpuMicrosPerRequest.get(n - 2);
		return Math.abs(last - previous) < SETTLED * previous;
	}

	private static void check(HttpResponse<String> response, boolean limited) {
		boolean hasHeader = response.headers().firstValue("X-RateLimit-Limit").isPresent();
		if (response.statusCode() != 200 || hasHeader != limited) {
			throw new IllegalStateException("Expected 200 " + (limited ? "with" : "without")
					+ " rate limit headers, got " + response.statusCode() + " " + response.headers().map());
		}
	}

	/**
	 * The section's figures from the measured windows: the median window of each app (a window is a
	 * sample of a distribution that drifts with the machine's load, and one disturbed window should not
	 * move the figure), with all windows in the notes.
	 * @param on the windows of the app with the limiter
	 * @param off the windows of the app without it
	 * @return the figures
	 */
	public static SectionResult result(List<Window> on, List<Window> off) {
		SectionResult section = new SectionResult();
		long failures = on.stream().mapToLong((w) -> w.load().failures()).sum()
				+ off.stream().mapToLong((w) -> w.load().failures()).sum();
		if (failures > 0) {
			throw new IllegalStateException(failures + " requests failed or were not 2xx; the figures would be wrong");
		}
		add(section, "requests/s", on, off, (w) -> w.load().requestsPerSecond(), "req/s");
		double p50On = median(values(on, (w) -> w.load().p50Millis()));
		double p50Off = median(values(off, (w) -> w.load().p50Millis()));
		double p99On = median(values(on, (w) -> w.load().p99Millis()));
		double p99Off = median(values(off, (w) -> w.load().p99Millis()));
		section.add(new Measurement("p50 latency", ENABLED, p50On, "ms"));
		section.add(new Measurement("p50 latency", DISABLED, p50Off, "ms"));
		section.add(new Measurement("p99 latency", ENABLED, p99On, "ms"));
		section.add(new Measurement("p99 latency", DISABLED, p99Off, "ms"));
		boolean cpuKnown = !Double.isNaN(median(values(on, Window::cpuMicrosPerRequest)))
				&& !Double.isNaN(median(values(off, Window::cpuMicrosPerRequest)));
		if (cpuKnown) {
			add(section, CPU_PER_REQUEST, on, off, Window::cpuMicrosPerRequest, "µs");
		}
		section.compare("requests/s", ENABLED, DISABLED, Comparison.Target.atLeast(0.95));
		section.compare("p99 latency", ENABLED, DISABLED, null);
		if (cpuKnown) {
			section.compare(CPU_PER_REQUEST, ENABLED, DISABLED, null);
		}
		section.note(String.format(Locale.ROOT, "Added p99: %+.3f ms (p50: %+.3f ms).", p99On - p99Off,
				p50On - p50Off));
		if (cpuKnown) {
			section.note(String.format(Locale.ROOT, "Added CPU per request: %+.1f µs.",
					median(values(on, Window::cpuMicrosPerRequest)) - median(values(off, Window::cpuMicrosPerRequest))));
		}
		section.note("Requests/s per window, on: " + rates(on) + "; off: " + rates(off) + " (on/off per round: "
				+ pairs(on, off) + ").");
		if (cpuKnown) {
			section.note("CPU µs per request per window, on: " + micros(values(on, Window::cpuMicrosPerRequest))
					+ "; off: " + micros(values(off, Window::cpuMicrosPerRequest)) + ".");
		}
		return section;
	}

	private static void add(SectionResult section, String figure, List<Window> on, List<Window> off,
			ToDoubleFunction<Window> value, String unit) {
		double[] onValues = values(on, value);
		double[] offValues = values(off, value);
		section.add(new Measurement(figure, ENABLED, median(onValues), halfInterquartileRange(onValues), unit));
		section.add(new Measurement(figure, DISABLED, median(offValues), halfInterquartileRange(offValues), unit));
	}

	private static double[] values(List<Window> windows, ToDoubleFunction<Window> value) {
		return windows.stream().mapToDouble(value).toArray();
	}

	private static String rates(List<Window> windows) {
		return String.join(", ", windows.stream().map((w) -> Format.number(w.load().requestsPerSecond())).toList());
	}

	private static String pairs(List<Window> on, List<Window> off) {
		List<String> ratios = new ArrayList<>();
		for (int i = 0; i < Math.min(on.size(), off.size()); i++) {
			ratios.add(String.format(Locale.ROOT, "%.2f",
					on.get(i).load().requestsPerSecond() / off.get(i).load().requestsPerSecond()));
		}
		return String.join(", ", ratios);
	}

	private static String micros(List<Double> values) {
		return micros(values.stream().mapToDouble(Double::doubleValue).toArray());
	}

	private static String micros(double[] values) {
		List<String> texts = new ArrayList<>();
		for (double value : values) {
			texts.add(Double.isNaN(value) ? "?" : String.format(Locale.ROOT, "%.1f", value));
		}
		return String.join(", ", texts);
	}

	/**
	 * Half the interquartile range (quartiles interpolated linearly), {@code NaN} for fewer than two values.
	 * @param values the values
	 * @return half the distance between the first and third quartile
	 */
	static double halfInterquartileRange(double[] values) {
		if (values.length < 2) {
			return Double.NaN;
		}
		double[] sorted = values.clone();
		java.util.Arrays.sort(sorted);
		return (quantile(sorted, 0.75) - quantile(sorted, 0.25)) / 2;
	}

	private static double quantile(double[] sorted, double q) {
		double position = q * (sorted.length - 1);
		int lower = (int) Math.floor(position);
		int upper = Math.min(sorted.length - 1, lower + 1);
		return sorted[lower] + (position - lower) * (sorted[upper] - sorted[lower]);
	}

	public static double median(double[] values) {
		double[] sorted = values.clone();
		java.util.Arrays.sort(sorted);
		int middle = sorted.length / 2;
		return (sorted.length % 2 == 1) ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
	}
}
