package io.github.ratelimit.benchmarks;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.List;
import java.util.Map;

import javax.imageio.ImageIO;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import org.openjdk.jmh.runner.options.VerboseMode;

import io.github.ratelimit.benchmarks.harness.Comparison;
import io.github.ratelimit.benchmarks.harness.Jmh;
import io.github.ratelimit.benchmarks.harness.LoadGenerator;
import io.github.ratelimit.benchmarks.harness.Measurement;
import io.github.ratelimit.benchmarks.harness.SectionOutcome;
import io.github.ratelimit.benchmarks.harness.SectionResult;
import io.github.ratelimit.benchmarks.harness.Settings;
import io.github.ratelimit.benchmarks.harness.WrkLoadGenerator;
import io.github.ratelimit.benchmarks.peers.Bucket4jLimiter;
import io.github.ratelimit.benchmarks.peers.FloorLimiter;
import io.github.ratelimit.benchmarks.peers.OursLimiter;
import io.github.ratelimit.benchmarks.peers.Policy;
import io.github.ratelimit.benchmarks.report.Chart;
import io.github.ratelimit.benchmarks.report.Report;
import io.github.ratelimit.benchmarks.report.ResultsFile;
import io.github.ratelimit.testsupport.RedisProcess;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Checks that the benchmarks start and that every implementation decides alike; measures nothing (no
 * timing is asserted anywhere).
 */
class BenchmarksSmokeTests {

	@Test
	void everyImplementationAllowsUnderTheGenerousPolicy() {
		OursLimiter ours = new OursLimiter(Policy.ALLOWED, 100);
		Bucket4jLimiter bucket4j = new Bucket4jLimiter(Policy.ALLOWED, 100);
		for (int i = 0; i < 1000; i++) {
			assertThat(ours.tryAcquire("10.0.0.1").isAllowed()).isTrue();
			assertThat(bucket4j.tryAcquire("10.0.0.1").isConsumed()).isTrue();
		}
	}

	@Test
	void everyImplementationRejectsTheSecondRequestUnderTheStrictPolicy() {
		OursLimiter ours = new OursLimiter(Policy.REJECTED, 100);
		Bucket4jLimiter bucket4j = new Bucket4jLimiter(Policy.REJECTED, 100);
		assertThat(ours.tryAcquire("10.0.0.1").isAllowed()).isTrue();
		assertThat(bucket4j.tryAcquire("10.0.0.1").isConsumed()).isTrue();
		assertThat(ours.tryAcquire("10.0.0.1").isAllowed()).isFalse();
		assertThat(bucket4j.tryAcquire("10.0.0.1").isConsumed()).isFalse();
		assertThat(ours.tryAcquire("10.0.0.2").isAllowed()).isTrue();
		assertThat(bucket4j.tryAcquire("10.0.0.2").isConsumed()).isTrue();
	}

	@Test
	void theFloorCountsOncePerCall() {
		FloorLimiter floor = new FloorLimiter(100);
		assertThat(floor.tryAcquire("10.0.0.1")).isTrue();
		assertThat(floor.tryAcquire("10.0.0.1")).isTrue();
		assertThat(floor.size()).isEqualTo(1);
	}

	@Test
	void keysAreDistinctAddressesInRandomOrder() {
		Keys keys = new Keys(1000);
		assertThat(keys.get(0)).isEqualTo("10.0.0.1");
		assertThat(keys.get(999)).isEqualTo("10.0.3.232");
		assertThat(Keys.name(999_999)).isEqualTo("10.15.66.64");
		assertThat(java.util.stream.IntStream.range(0, 5000).map(keys::indexAt).distinct().count()).isGreaterThan(900);
	}

	@ParameterizedTest
	@ValueSource(strings = { "ours", "oursTokenBucketOnly", "bucket4j", "floor", "floorExpiring" })
	void everyBenchmarkMethodRunsInProcess(String method) {
		for (String policy : List.of("allowed", "rejected")) {
			DecisionBenchmark benchmark = new DecisionBenchmark();
			benchmark.keys = 100;
			benchmark.policy = policy;
			benchmark.setUp(method);
			DecisionBenchmark.Cursor cursor = new DecisionBenchmark.Cursor();
			Object answer = switch (method) {
				case "ours" -> benchmark.ours(cursor).isAllowed();
				case "oursTokenBucketOnly" -> benchmark.oursTokenBucketOnly(cursor).isAllowed();
				case "bucket4j" -> benchmark.bucket4j(cursor).isConsumed();
				case "floor" -> benchmark.floor(cursor);
				default -> benchmark.floorExpiring(cursor);
			};
			boolean expected = method.startsWith("floor") || policy.equals("allowed");
			assertThat(answer).as(method + " under " + policy).isEqualTo(expected);
		}
	}

	@Test
	void everyRedisBenchmarkMethodRunsInProcess() throws Exception {
		org.junit.jupiter.api.Assumptions.assumeTrue(RedisProcess.onPath("redis-server").isPresent(), "redis-server is not installed");
		try (RedisProcess redis = RedisProcess.launch()) {
			for (String method : RedisDecisionSection.METHODS) {
				RedisDecisionBenchmark benchmark = new RedisDecisionBenchmark();
				benchmark.keys = 100;
				benchmark.setUp(method, redis.port());
				RedisDecisionBenchmark.Cursor cursor = new RedisDecisionBenchmark.Cursor();
				try {
					for (int i = 0; i < 50; i++) {
						Object allowed = switch (method) {
							case "ours" -> benchmark.ours(cursor).isAllowed();
							case "oursUncoalesced" -> benchmark.oursUncoalesced(cursor).isAllowed();
							case "bucket4j" -> benchmark.bucket4j(cursor).isConsumed();
							default -> benchmark.raw(cursor) == 1L;
						};
						assertThat(allowed).as(method).isEqualTo(true);
					}
				}
				finally {
					benchmark.tearDown();
				}
			}
		}
	}

	@Test
	void theRejectedKeyBenchmarkRejectsEveryRequestWithFewRedisCalls() throws Exception {
		org.junit.jupiter.api.Assumptions.assumeTrue(RedisProcess.onPath("redis-server").isPresent(), "redis-server is not installed");
		try (RedisProcess redis = RedisProcess.launch()) {
			RedisDecisionBenchmark benchmark = new RedisDecisionBenchmark();
			benchmark.keys = 100;
			benchmark.setUp("oursRejected", redis.port());
			try {
				long before = benchmark.scriptCalls();
				for (int i = 0; i < 1_000; i++) {
					assertThat(benchmark.oursRejected().isAllowed()).isFalse();
				}
				assertThat(benchmark.scriptCalls() - before).as("kept in process").isLessThan(10);
			}
			finally {
				benchmark.tearDown();
			}
		}
	}

	@Test
	void redisMemoryIsMeasuredPerAlgorithm() throws Exception {
		org.junit.jupiter.api.Assumptions.assumeTrue(RedisProcess.onPath("redis-server").isPresent(), "redis-server is not installed");
		SectionResult section = new SectionResult();
		RedisMemory.measure(section);
		assertThat(section.figures()).hasSize((int) java.util.Arrays.stream(io.github.ratelimit.core.Algorithm.values())
			.filter(io.github.ratelimit.core.Algorithm::isRate)
			.count());
		assertThat(section.find(RedisMemory.figure("token-bucket"), "ours").value()).isBetween(50.0, 300.0);
		assertThat(section.find(RedisMemory.figure("token-bucket"), "Bucket4j").value()).isPositive();
	}

	@Test
	void jmhRunsABenchmarkWithoutForking() throws Exception {
		Collection<RunResult> results = new Runner(new OptionsBuilder()
			.include(DecisionBenchmark.class.getName() + "\\.ours$")
			.param("keys", "10")
			.param("policy", "allowed")
			.forks(0)
			.threads(1)
			.warmupIterations(0)
			.measurementIterations(1)
			.measurementTime(TimeValue.milliseconds(100))
			.verbosity(VerboseMode.SILENT)
			.build()).run();
		assertThat(results).hasSize(1);
		assertThat(results.iterator().next().getParams().getBenchmark()).endsWith(".ours");
	}

	@Test
	void memoryFootprintPrintsItsResult() throws Exception {
		assertThat(MemoryFootprint.measure("ours", 1000)).startsWith("RESULT implementation=ours keys=1000 tracked=1000 ");
	}

	@Test
	void aForkIsSummedUpByItsMedianIteration() {
		Jmh.Fork fork = new Jmh.Fork("bucket4j", Map.of("keys", "1"), 2, new double[] { 9, 1, 5, 6, 4 }, 0.02, 0,
				"ops/µs");
		Measurement measurement = fork.measurement("1 key");
		assertThat(measurement.implementation()).isEqualTo("Bucket4j");
		assertThat(measurement.value()).isEqualTo(5);
		assertThat(measurement.error()).isEqualTo(1);
		assertThat(Jmh.combinations(new java.util.LinkedHashMap<>(Map.of("keys", List.of("1", "2"))))).hasSize(2);
	}

	@Test
	void forksOfRoundsArePooledIntoOneMedianOfAllTheirIterations() {
		// A slow round and a fast one: the figure is neither round's median but the median of all six iterations.
		Jmh.Fork slow = new Jmh.Fork("raw", Map.of("keys", "1"), 16, new double[] { 20, 21, 22 }, 0.01, 0, "ops/s");
		Jmh.Fork fast = new Jmh.Fork("raw", Map.of("keys", "1"), 16, new double[] { 30, 29, 28 }, 0.05, 1, "ops/s");
		Jmh.Fork pooled = Jmh.Fork.pooled(List.of(slow, fast));
		assertThat(pooled.iterations()).containsExactly(20, 21, 22, 30, 29, 28);
		assertThat(pooled.measurement("x").value()).isEqualTo(25);
		assertThat(pooled.foreignCpu()).isEqualTo(0.05);
		assertThat(pooled.repeats()).isEqualTo(1);
	}

	@Test
	void theHttpFiguresAreTheMedianWindowsSoThatOneColdOrDisturbedWindowDoesNotMoveThem() {
		// Today's first window with the limiter, before the JIT had compiled its path, was half the others.
		List<HttpOverheadSection.Window> on = List.of(window(7_232, 45.0), window(13_360, 30.2), window(13_468, 30.0));
		List<HttpOverheadSection.Window> off = List.of(window(14_220, 29.0), window(15_454, 28.1), window(15_664, 28.0));
		SectionResult http = HttpOverheadSection.result(on, off);
		assertThat(http.find("requests/s", HttpOverheadSection.ENABLED).value()).isEqualTo(13_360);
		assertThat(http.find("requests/s", HttpOverheadSection.DISABLED).value()).isEqualTo(15_454);
		assertThat(http.find(HttpOverheadSection.CPU_PER_REQUEST, HttpOverheadSection.ENABLED).value()).isEqualTo(30.2);
		assertThat(http.comparisons()).anySatisfy((c) -> {
			assertThat(c.figure()).isEqualTo(HttpOverheadSection.CPU_PER_REQUEST);
			assertThat(c.ratio()).isCloseTo(30.2 / 28.1, org.assertj.core.data.Offset.offset(1e-9));
		});
		assertThat(http.notes()).anySatisfy((n) -> assertThat(n).contains("on/off per round: 0.51, 0.86, 0.86"));
		// Without a CPU time (not Linux), no CPU figure.
		SectionResult unknown = HttpOverheadSection.result(List.of(new HttpOverheadSection.Window(load(1000))),
				List.of(new HttpOverheadSection.Window(load(1000))));
		assertThat(unknown.find(HttpOverheadSection.CPU_PER_REQUEST, HttpOverheadSection.ENABLED)).isNull();
	}

	@Test
	void warmingUpStopsOnceTheCpuTimePerRequestHasSettled() {
		assertThat(HttpOverheadSection.settled(List.of(2265.8))).isFalse();
		assertThat(HttpOverheadSection.settled(List.of(2265.8, 848.0, 470.1))).isFalse();
		assertThat(HttpOverheadSection.settled(List.of(470.1, 98.5, 96.0))).isTrue();
		assertThat(HttpOverheadSection.settled(List.of(98.5, 90.0))).isFalse();
		assertThat(HttpOverheadSection.settled(List.of(Double.NaN))).isTrue();
		// Settled figures of an app whose JIT still took 5% of the round: not warmed up yet.
		assertThat(HttpOverheadSection.warmedUp(List.of(98.5, 96.0), List.of(0.20, 0.05))).isFalse();
		assertThat(HttpOverheadSection.warmedUp(List.of(98.5, 96.0), List.of(0.20, 0.01))).isTrue();
		assertThat(HttpOverheadSection.warmedUp(List.of(98.5, 90.0), List.of(0.20, 0.01))).isFalse();
		assertThat(HttpOverheadSection.warmedUp(List.of(98.5, 96.0), List.of(Double.NaN))).isTrue();
		// /proc's stat line: utime and stime after a command name with spaces and parentheses.
		assertThat(io.github.ratelimit.benchmarks.harness.CpuMeter.ticks(
				"4242 (C2 CompilerThre) S 1 4 5 0 -1 4194368 1 0 0 0 731 45 0 0 20 0 1 0 99 0 0", 14, 15)).isEqualTo(776);
		assertThat(io.github.ratelimit.benchmarks.harness.CpuMeter.ticks(
				"7 (a) (b) R 1 4 5 0 -1 4194368 1 0 0 0 3 4 5 6 20 0 1 0 99 0 0", 14, 17)).isEqualTo(18);
		assertThat(HttpOverheadSection.halfInterquartileRange(new double[] { 1, 2, 3, 4, 5 })).isEqualTo(1);
	}

	private static HttpOverheadSection.Window window(double requestsPerSecond, double cpuMicros) {
		return new HttpOverheadSection.Window(load(requestsPerSecond), cpuMicros);
	}

	private static LoadGenerator.LoadResult load(double requestsPerSecond) {
		return new LoadGenerator.LoadResult((long) (requestsPerSecond * 8), 8, 0, 1.0, 3.0);
	}

	@Test
	void wrkOutputIsRead() {
		String output = """
				Running 8s test @ http://127.0.0.1:40000/api/hello
				  1 threads and 16 connections
				  Thread Stats   Avg      Stdev     Max   +/- Stdev
				    Latency     1.02ms  512.00us  30.00ms   90.00%
				    Req/Sec    15.50k     1.20k   17.00k    70.00%
				  Latency Distribution
				     50%  820.00us
				     75%    1.10ms
				     90%    1.50ms
				     99%    3.25ms
				  123456 requests in 8.00s, 20.00MB read
				  Non-2xx or 3xx responses: 7
				Requests/sec:  15432.00
				Transfer/sec:      2.50MB
				""";
		LoadGenerator.LoadResult result = WrkLoadGenerator.parse(output);
		assertThat(result.requests()).isEqualTo(123456);
		assertThat(result.seconds()).isEqualTo(8.0);
		assertThat(result.failures()).isEqualTo(7);
		assertThat(result.p50Millis()).isEqualTo(0.82);
		assertThat(result.p99Millis()).isEqualTo(3.25);
	}

	@Test
	void resultsTableJsonAndChartAreWritten(@TempDir Path directory) throws Exception {
		SectionResult local = new SectionResult();
		for (String figure : List.of("1 key, all allowed", "100,000 keys, mostly rejected")) {
			local.add(new Measurement(figure, "ours", 12.3, 0.4, "ops/µs"))
				.add(new Measurement(figure, "ours: bucket only", 20.1, 0.4, "ops/µs"))
				.add(new Measurement(figure, "Bucket4j", 5.7, 0.2, "ops/µs"))
				.add(new Measurement(figure, "floor", 12.9, 0.3, "ops/µs"));
			local.compare(figure, "ours", "Bucket4j", Comparison.Target.atLeast(2))
				.compare(figure, "ours", "floor", Comparison.Target.atLeast(0.8));
		}
		SectionResult keys = new SectionResult();
		for (int count : ScalingSection.keyCounts()) {
			keys.add(new Measurement(ScalingSection.keysFigure(count), "ours", 10 - Math.log10(count), "ops/µs"))
				.add(new Measurement(ScalingSection.keysFigure(count), "Bucket4j", 5 - Math.log10(count) / 2, "ops/µs"));
		}
		SectionResult redis = new SectionResult()
			.add(new Measurement(RedisDecisionSection.FIGURE, "ours", 60_000, 600, "ops/s"))
			.add(new Measurement(RedisDecisionSection.FIGURE, "Bucket4j", 28_000, 300, "ops/s"))
			.add(new Measurement(RedisDecisionSection.FIGURE, "raw EVALSHA", 65_000, 700, "ops/s"))
			.compare(RedisDecisionSection.FIGURE, "ours", "Bucket4j", Comparison.Target.atLeast(2))
			.compare(RedisDecisionSection.FIGURE, "ours", "raw EVALSHA", Comparison.Target.atLeast(0.9))
			.add(new Measurement(RedisDecisionSection.P50, "ours", 105, "µs"))
			.add(new Measurement(RedisDecisionSection.P50, "raw EVALSHA", 100, "µs"))
			.compare(RedisDecisionSection.P50, "ours", "raw EVALSHA", Comparison.Target.atMost(1.1));
		SectionResult memory = new SectionResult().add(new Measurement("bytes per key", "ours", 150, "B"))
			.add(new Measurement("bytes per key", "target", 200, "B"))
			.add(new Measurement(RedisMemory.figure("token-bucket"), "ours", 90, "B"))
			.add(new Measurement(RedisMemory.figure("token-bucket"), "Bucket4j", 200, "B"))
			.add(new Measurement(RedisMemory.figure("fixed-window"), "ours", 80, "B"));
		SectionResult http = HttpOverheadSection.result(
				List.of(new HttpOverheadSection.Window(new LoadGenerator.LoadResult(100_000, 8, 0, 0.8, 3.1))),
				List.of(new HttpOverheadSection.Window(new LoadGenerator.LoadResult(102_000, 8, 0, 0.78, 3.0))));
		Settings settings = new Settings(true, directory, directory.resolve("chart.png"), directory, directory, directory, 0);
		List<SectionOutcome> outcomes = List.of(new SectionOutcome(new LocalDecisionSection(), local, null, 1),
				new SectionOutcome(ScalingSection.byKeys(), keys, null, 1),
				new SectionOutcome(ScalingSection.byThreads(), null, "skipped", 0),
				new SectionOutcome(new RedisDecisionSection(), redis, null, 1),
				new SectionOutcome(new MemorySection(), memory, null, 1),
				new SectionOutcome(HttpOverheadSection.servlet(), http, null, 1));

		String table = Report.tables(outcomes, false);
		assertThat(table).contains("ours/raw EVALSHA (>= 0.9)").contains("0.92 ✓").contains("Redis, token-bucket");
		assertThat(table).contains("1 thread, p50 latency per decision").contains("1.05 ✓ (<= 1.1)");
		assertThat(table).contains("ours/Bucket4j (>= 2)").contains("2.16 ✓").contains("0.95 ✓").contains("Not measured: skipped");
		String json = ResultsFile.json(Map.of("quick", "true"), outcomes);
		assertThat(json).contains("\"ratio\": 2.1579").contains("\"failure\": \"skipped\"");
		Chart.render(outcomes, "smoke test", settings.chart());
		assertThat(ImageIO.read(settings.chart().toFile()).getWidth()).isEqualTo(1500);
		assertThat(Files.size(settings.chart())).isGreaterThan(10_000);
	}

	@Test
	void aResultsFileIsReadBackAsWrittenAndItsChartDrawnAgain(@TempDir Path directory) throws Exception {
		SectionResult local = new SectionResult()
			.add(new Measurement("1 key, all allowed", "ours", 12.345678, 0.4, "ops/µs", 0.25))
			.add(new Measurement("1 key, all allowed", "Bucket4j", 5.7, Double.NaN, "ops/µs"))
			.compare("1 key, all allowed", "ours", "Bucket4j", Comparison.Target.atLeast(2))
			.note("a note, with \"quotes\"\nand a new line");
		List<SectionOutcome> outcomes = List.of(new SectionOutcome(new LocalDecisionSection(), local, null, 3),
				new SectionOutcome(new RedisDecisionSection(), null, "redis-server is not installed", 0));
		String json = ResultsFile.json(Map.of("commit", "abc1234", "quick", "true"), outcomes);
		assertThat(json).contains("\"value\": 12.3457").contains("\"error\": null");
		Files.writeString(directory.resolve("results.json"), json);

		ResultsFile.Recorded recorded = ResultsFile.read(directory.resolve("results.json"));
		assertThat(recorded.environment()).containsEntry("commit", "abc1234");
		assertThat(recorded.outcomes().get(0).result().notes()).containsExactly("a note, with \"quotes\"\nand a new line");
		assertThat(ResultsFile.json(recorded.environment(), recorded.outcomes())).isEqualTo(json);

		BenchmarkRunner.report(directory, directory.resolve("chart.png"));
		assertThat(ImageIO.read(directory.resolve("chart.png").toFile()).getWidth()).isEqualTo(1500);
	}
}
