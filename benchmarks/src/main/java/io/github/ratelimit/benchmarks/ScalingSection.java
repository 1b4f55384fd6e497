package io.github.ratelimit.benchmarks;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.github.ratelimit.benchmarks.harness.Jmh;
import io.github.ratelimit.benchmarks.harness.Section;
import io.github.ratelimit.benchmarks.harness.SectionResult;
import io.github.ratelimit.benchmarks.harness.Settings;

/**
 * How the decision cost scales: from 1 to 1,000,000 keys at 2 threads, or from 1 to 16 threads at
 * 100,000 keys; every request allowed. Beyond 2 threads this 2-core machine is oversubscribed, so
 * the thread sweep shows contention and fairness, not parallel speed-up.
 */
final class ScalingSection implements Section {

	static final List<String> METHODS = List.of("ours", "bucket4j", "floor");

	private static final Jmh.Iterations ITERATIONS = new Jmh.Iterations(1, 3, 6, 500);

	private final boolean byKeys;

	private ScalingSection(boolean byKeys) {
		this.byKeys = byKeys;
	}

	static ScalingSection byKeys() {
		return new ScalingSection(true);
	}

	static ScalingSection byThreads() {
		return new ScalingSection(false);
	}

	static List<Integer> keyCounts() {
		return List.of(1, 100, 10_000, 100_000, 1_000_000);
	}

	static List<Integer> threadCounts() {
		return List.of(1, 2, 4, 8, 16);
	}

	@Override
	public String id() {
		return this.byKeys ? "keys" : "threads";
	}

	@Override
	public String title() {
		return this.byKeys ? "Scaling by keys: ops/µs, 2 threads, all allowed"
				: "Scaling by threads: ops/µs, 100,000 keys, all allowed";
	}

	@Override
	public String method() {
		return "JMH throughput, " + ITERATIONS.describe() + "; otherwise as the local decisions."
				+ (this.byKeys ? "" : " Warm-up grows by 1 s per 2 threads above 2 (the JIT compiler shares the cores too)."
						+ " The machine has 2 cores: more threads share them.");
	}

	@Override
	public long estimatedSeconds(Settings settings) {
		if (settings.quick()) {
			return (long) (this.byKeys ? keyCounts() : threadCounts()).size() * METHODS.size() * 3;
		}
		if (this.byKeys) {
			return (long) keyCounts().size() * METHODS.size() * (ITERATIONS.seconds() + 1);
		}
		return threadCounts().stream().mapToLong((threads) -> METHODS.size() * (iterations(threads).seconds() + 1)).sum();
	}

	@Override
	public SectionResult run(Settings settings) throws Exception {
		SectionResult section = new SectionResult();
		List<Jmh.Fork> all = new java.util.ArrayList<>();
		if (this.byKeys) {
			for (int keys : keyCounts()) {
				List<Jmh.Fork> forks = Jmh.run(settings, METHODS, params(keys), 2, ITERATIONS, id());
				addAll(section, keysFigure(keys), forks);
				all.addAll(forks);
			}
		}
		else {
			for (int threads : threadCounts()) {
				List<Jmh.Fork> forks = Jmh.run(settings, METHODS, params(100_000), threads, iterations(threads), id());
				addAll(section, threadsFigure(threads), forks);
				all.addAll(forks);
			}
		}
		Jmh.noteRepeats(all, section);
		return section;
	}

	/**
	 * Warm-up grows with the threads: 16 busy threads on 2 cores leave the JIT compiler little CPU, and
	 * a fork measured before its hot path is compiled reads several times too slow.
	 */
	static Jmh.Iterations iterations(int threads) {
		return new Jmh.Iterations(ITERATIONS.forks(), ITERATIONS.warmups() + Math.max(0, threads - 2) / 2,
				ITERATIONS.iterations(), ITERATIONS.iterationMillis());
	}

	private static Map<String, List<String>> params(int keys) {
		Map<String, List<String>> params = new LinkedHashMap<>();
		params.put("keys", List.of(Integer.toString(keys)));
		params.put("policy", List.of("allowed"));
		return params;
	}

	private static void addAll(SectionResult section, String figure, List<Jmh.Fork> forks) {
		forks.forEach((fork) -> section.add(fork.measurement(figure)));
		section.compare(figure, "ours", "Bucket4j", null);
		section.compare(figure, "ours", "floor", null);
	}

	static String keysFigure(int keys) {
		return (keys == 1) ? "1 key" : String.format(java.util.Locale.ROOT, "%,d keys", keys);
	}

	static String threadsFigure(int threads) {
		return threads + ((threads == 1) ? " thread" : " threads");
	}
}
