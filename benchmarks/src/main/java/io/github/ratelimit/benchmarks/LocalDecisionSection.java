package io.github.ratelimit.benchmarks;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.github.ratelimit.benchmarks.harness.Comparison;
import io.github.ratelimit.benchmarks.harness.Jmh;
import io.github.ratelimit.benchmarks.harness.Section;
import io.github.ratelimit.benchmarks.harness.SectionResult;
import io.github.ratelimit.benchmarks.harness.Settings;

/**
 * Local decision throughput: ours against Bucket4j and the floor, on one hot key and on 100,000 keys,
 * with every request allowed and with nearly every request rejected; 2 threads.
 */
final class LocalDecisionSection implements Section {

	static final List<String> METHODS = List.of("ours", "oursTokenBucketOnly", "bucket4j", "floor", "floorExpiring");

	static final List<String> KEYS = List.of("1", "100000");

	static final List<String> POLICIES = List.of("allowed", "rejected");

	static final int THREADS = 2;

	private static final Jmh.Iterations ITERATIONS = new Jmh.Iterations(2, 4, 6, 1000);

	@Override
	public String id() {
		return "local";
	}

	@Override
	public String title() {
		return "Local decisions: ops/µs, " + THREADS + " threads, higher is better";
	}

	@Override
	public String method() {
		return "JMH throughput, " + ITERATIONS.describe() + "; 2 GB heap, G1; keys asked in random order. "
				+ "ours = CaffeineRateLimitStore.tryAcquire(new Acquisition(...)); "
				+ "ours: bucket only = our TokenBucket alone, found by array index (no map); "
				+ "Bucket4j = a local bucket per key in a Caffeine cache (expire after access); "
				+ "floor = one lookup in a size-bounded Caffeine cache + one compare-and-set; "
				+ "floor: expiring cache = the same in a cache configured as our store's (variable expiry, ticker).";
	}

	@Override
	public long estimatedSeconds(Settings settings) {
		return (long) METHODS.size() * KEYS.size() * POLICIES.size() * (settings.quick() ? 3 : ITERATIONS.seconds() + 1);
	}

	@Override
	public SectionResult run(Settings settings) throws Exception {
		Map<String, List<String>> params = new LinkedHashMap<>();
		params.put("keys", KEYS);
		params.put("policy", POLICIES);
		List<Jmh.Fork> forks = Jmh.run(settings, METHODS, params, THREADS, ITERATIONS, id());
		SectionResult section = new SectionResult();
		for (String keys : KEYS) {
			for (String policy : POLICIES) {
				String figure = figure(keys, policy);
				for (Jmh.Fork fork : forks) {
					if (fork.params().get("keys").equals(keys) && fork.params().get("policy").equals(policy)) {
						section.add(fork.measurement(figure));
					}
				}
				section.compare(figure, "ours", "Bucket4j", Comparison.Target.atLeast(2));
				section.compare(figure, "ours", "floor", null);
				// A floor on a cache that expires like ours: a tie is the best case.
				section.compare(figure, "ours", "floor: expiring cache", Comparison.Target.atLeast(0.9));
			}
		}
		Jmh.noteRepeats(forks, section);
		return section;
	}

	static String figure(String keys, String policy) {
		String keyCount = keys.equals("1") ? "1 key" : String.format(java.util.Locale.ROOT, "%,d keys", Long.parseLong(keys));
		return keyCount + ", " + (policy.equals("allowed") ? "all allowed" : "mostly rejected");
	}
}
