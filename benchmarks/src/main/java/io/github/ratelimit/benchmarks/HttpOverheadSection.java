package io.github.ratelimit.benchmarks;

import java.io.InputStream;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

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
 * The HTTP overhead of the filter: the sample app with one rule whose policy allows every request,
 * against the same app with {@code --rate-limit.enabled=false}, both loaded on loopback with
 * {@code GET /api/hello}. Both apps run at once and are loaded in turn, in alternating order, so that
 * drift in the machine's load falls on both sides alike.
 */
public final class HttpOverheadSection implements Section {

	static final String PATH = "/api/hello";

	public static final String ENABLED = "rate limit on";

	public static final String DISABLED = "rate limit off";

	private final LoadGenerator generator;

	public HttpOverheadSection() {
		this(LoadGenerator.best());
	}

	public HttpOverheadSection(LoadGenerator generator) {
		this.generator = generator;
	}

	private record Plan(int warmupRounds, Duration warmup, int rounds, Duration window) {

		long seconds() {
			return 2 * (this.warmupRounds * this.warmup.toSeconds() + this.rounds * this.window.toSeconds()) + 15;
		}
	}

	private static Plan plan(boolean quick) {
		return quick ? new Plan(1, Duration.ofSeconds(2), 1, Duration.ofSeconds(3))
				: new Plan(2, Duration.ofSeconds(6), 3, Duration.ofSeconds(8));
	}

	@Override
	public String id() {
		return "http";
	}

	@Override
	public String title() {
		return "HTTP overhead: the sample app, GET " + PATH + ", loopback";
	}

	@Override
	public String method() {
		Plan plan = plan(false);
		return this.generator.name() + "; both apps (" + String.join(" ", SampleApp.JVM_ARGS) + ") warmed up for "
				+ plan.warmupRounds() * plan.warmup().toSeconds() + " s each, then loaded in turn, " + plan.rounds()
				+ " windows of " + plan.window().toSeconds() + " s each, alternating which goes first; "
				+ "requests/s over all windows, latency percentiles the median of the windows'. "
				+ "The load generator shares the 2 cores with the server.";
	}

	@Override
	public long estimatedSeconds(Settings settings) {
		return plan(settings.quick()).seconds();
	}

	@Override
	public SectionResult run(Settings settings) throws Exception {
		Path jar = settings.sampleAppJar();
		if (!Files.isRegularFile(jar)) {
			throw new IllegalStateException("No sample app jar at " + jar
					+ "; build it with: mvn -B -q package -pl sample-app -am -DskipTests");
		}
		Path allowAll = Files.createTempFile("rate-limit-allow-all", ".yml");
		try (InputStream yml = HttpOverheadSection.class.getResourceAsStream("/allow-all.yml")) {
			Files.copy(yml, allowAll, StandardCopyOption.REPLACE_EXISTING);
		}
		String config = "--spring.config.additional-location=file:" + allowAll.toAbsolutePath();
		Plan plan = plan(settings.quick());
		try (SampleApp enabled = SampleApp.start(jar, "enabled", settings.logDirectory(), List.of(config));
				SampleApp disabled = SampleApp.start(jar, "disabled", settings.logDirectory(),
						List.of(config, "--rate-limit.enabled=false"))) {
			enabled.awaitReady(Duration.ofSeconds(90));
			disabled.awaitReady(Duration.ofSeconds(90));
			check(enabled.get(PATH), true);
			check(disabled.get(PATH), false);
			for (int i = 0; i < plan.warmupRounds(); i++) {
				this.generator.run(enabled.uri(PATH), plan.warmup());
				this.generator.run(disabled.uri(PATH), plan.warmup());
			}
			List<LoadGenerator.LoadResult> on = new ArrayList<>();
			List<LoadGenerator.LoadResult> off = new ArrayList<>();
			List<Double> foreign = new ArrayList<>();
			for (int i = 0; i < plan.rounds(); i++) {
				boolean enabledFirst = (i % 2 == 0);
				for (SampleApp app : enabledFirst ? List.of(enabled, disabled) : List.of(disabled, enabled)) {
					LoadGenerator.LoadResult window = null;
					double share = Double.NaN;
					for (int attempt = 0; attempt <= Jmh.MAX_REPEATS; attempt++) {
						CpuMeter.awaitIdle(settings.quick() ? 0 : settings.maxIdleWaitSeconds());
						CpuMeter.Snapshot before = CpuMeter.snapshot();
						LoadGenerator.LoadResult measured = this.generator.run(app.uri(PATH), plan.window());
						double measuredShare = CpuMeter.foreignShare(before, CpuMeter.snapshot());
						Files.writeString(settings.logDirectory().resolve("http-windows.log"),
								((app == enabled) ? ENABLED : DISABLED) + "\n" + measured + "\n" + measured.output() + "\n",
								java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
						System.out.printf(java.util.Locale.ROOT,
								"  %-15s %8s req/s  p99 %6.2f ms  (other processes: %s CPU)%n",
								(app == enabled) ? ENABLED : DISABLED, Format.number(measured.requestsPerSecond()),
								measured.p99Millis(), CpuMeter.percent(measuredShare));
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
			result.note("Other processes took " + String.join(", ", foreign.stream().map(CpuMeter::percent).toList())
					+ " of the CPUs during the windows.");
			return result;
		}
		finally {
			Files.deleteIfExists(allowAll);
		}
	}

	private static void check(HttpResponse<String> response, boolean limited) {
		boolean hasHeader = response.headers().firstValue("X-RateLimit-Limit").isPresent();
		if (response.statusCode() != 200 || hasHeader != limited) {
			throw new IllegalStateException("Expected 200 " + (limited ? "with" : "without")
					+ " rate limit headers, got " + response.statusCode() + " " + response.headers().map());
		}
	}

	public static SectionResult result(List<LoadGenerator.LoadResult> on, List<LoadGenerator.LoadResult> off) {
		SectionResult section = new SectionResult();
		long failures = on.stream().mapToLong(LoadGenerator.LoadResult::failures).sum()
				+ off.stream().mapToLong(LoadGenerator.LoadResult::failures).sum();
		if (failures > 0) {
			throw new IllegalStateException(failures + " requests failed or were not 2xx; the figures would be wrong");
		}
		section.add(new Measurement("requests/s", ENABLED, requestsPerSecond(on), "req/s"));
		section.add(new Measurement("requests/s", DISABLED, requestsPerSecond(off), "req/s"));
		double p50On = median(on.stream().mapToDouble(LoadGenerator.LoadResult::p50Millis).toArray());
		double p50Off = median(off.stream().mapToDouble(LoadGenerator.LoadResult::p50Millis).toArray());
		double p99On = median(on.stream().mapToDouble(LoadGenerator.LoadResult::p99Millis).toArray());
		double p99Off = median(off.stream().mapToDouble(LoadGenerator.LoadResult::p99Millis).toArray());
		section.add(new Measurement("p50 latency", ENABLED, p50On, "ms"));
		section.add(new Measurement("p50 latency", DISABLED, p50Off, "ms"));
		section.add(new Measurement("p99 latency", ENABLED, p99On, "ms"));
		section.add(new Measurement("p99 latency", DISABLED, p99Off, "ms"));
		section.compare("requests/s", ENABLED, DISABLED, Comparison.Target.atLeast(0.95));
		section.compare("p99 latency", ENABLED, DISABLED, null);
		section.note(String.format(java.util.Locale.ROOT, "Added p99: %+.3f ms (p50: %+.3f ms).", p99On - p99Off,
				p50On - p50Off));
		section.note("Requests/s per window, on: " + rates(on) + "; off: " + rates(off) + ".");
		return section;
	}

	private static double requestsPerSecond(List<LoadGenerator.LoadResult> results) {
		long requests = results.stream().mapToLong(LoadGenerator.LoadResult::requests).sum();
		double seconds = results.stream().mapToDouble(LoadGenerator.LoadResult::seconds).sum();
		return requests / seconds;
	}

	private static String rates(List<LoadGenerator.LoadResult> results) {
		return String.join(", ", results.stream().map((r) -> Format.number(r.requestsPerSecond())).toList());
	}

	public static double median(double[] values) {
		double[] sorted = values.clone();
		java.util.Arrays.sort(sorted);
		int middle = sorted.length / 2;
		return (sorted.length % 2 == 1) ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
	}
}
