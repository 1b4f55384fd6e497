package io.github.ratelimit.benchmarks;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import io.github.ratelimit.benchmarks.harness.Comparison;
import io.github.ratelimit.benchmarks.harness.Jmh;
import io.github.ratelimit.benchmarks.harness.Measurement;
import io.github.ratelimit.benchmarks.harness.Section;
import io.github.ratelimit.benchmarks.harness.SectionResult;
import io.github.ratelimit.benchmarks.harness.Settings;
import io.github.ratelimit.testsupport.RedisProcess;

/**
 * Redis decision throughput (issue 6, item 2): ours ({@code RedisRateLimitStore} on Lettuce) against
 * Bucket4j's Lettuce compare-and-swap proxy manager and a raw Lettuce {@code EVALSHA} loop of a
 * minimal GCRA script (the ceiling); token bucket, 100,000 keys, 16 threads, on a {@code redis-server}
 * the section starts on a free loopback port and stops afterwards.
 */
final class RedisDecisionSection implements Section {

	static final List<String> METHODS = List.of("ours", "bucket4j", "raw");

	static final int KEYS = 100_000;

	static final int THREADS = 16;

	static final String FIGURE = String.format(Locale.ROOT, "%,d keys, all allowed", KEYS);

	static final String REJECTED = "one key, all rejected";

	static final String REJECTED_CALLS = "one key, all rejected: Redis script calls per decision";

	/** One fork per implementation: 10 x 1 s warm-up, then 3 x 10 s measured. */
	private static final Jmh.Iterations ITERATIONS = new Jmh.Iterations(1, 10, 3, 10_000);

	@Override
	public String id() {
		return "redis";
	}

	@Override
	public String title() {
		return "Redis decisions: ops/s, " + THREADS + " threads, token bucket, higher is better";
	}

	@Override
	public String method() {
		return "JMH throughput, " + THREADS + " threads in a closed loop (each waits for its answer), "
				+ ITERATIONS.describe() + "; 2 GB heap, G1; " + KEYS + " keys asked in random order, a token bucket "
				+ "of " + RedisDecisionBenchmark.LIMIT + " per hour per key (every request allowed); one redis-server "
				+ "(" + RedisProcess.version() + ", no persistence) started by the run on a free loopback port, on the "
				+ "same 2 cores as the client, flushed before each implementation; one shared Lettuce connection each. "
				+ "ours = RedisRateLimitStore.tryAcquire(new Acquisition(...)) on a LettuceConnectionFactory; "
				+ "Bucket4j = bucket4j_jdk17-lettuce 8.19.0 compare-and-swap proxy manager, one prebuilt BucketProxy "
				+ "per key, tryConsumeAndReturnRemaining(1), keys expiring when refilled; "
				+ "raw EVALSHA = Lettuce's synchronous evalsha of a 9-line GCRA script (server TIME, GET, SET PX), "
				+ "keys and arguments prebuilt, an integer reply. " + REJECTED + ": ours on one key whose budget is spent "
				+ "(every request rejected; coalescing and the rejection cache on, as by default), " + THREADS
				+ " threads, and the script calls Redis counted meanwhile.";
	}

	@Override
	public long estimatedSeconds(Settings settings) {
		return (long) (METHODS.size() + 1) * (settings.quick() ? 4 : ITERATIONS.seconds() + 2);
	}

	/** One key whose budget is spent, 16 threads: decisions/s, and Redis' own count of script calls. */
	private void rejected(Settings settings, RedisProcess redis, Map<String, List<String>> params, SectionResult section)
			throws Exception {
		Path calls = Files.createTempFile("redis-calls-", ".txt");
		try {
			List<Jmh.Fork> forks = Jmh.run(settings, RedisDecisionBenchmark.class, "ops/s",
					List.of("-D" + RedisDecisionBenchmark.PORT_PROPERTY + "=" + redis.port(),
							"-D" + RedisDecisionBenchmark.CALLS_FILE_PROPERTY + "=" + calls),
					List.of("oursRejected"), params, THREADS, ITERATIONS, id() + "-rejected");
			Measurement decisions = forks.get(0).measurement(REJECTED);
			section.add(new Measurement(REJECTED, "ours", decisions.value(), decisions.error(), decisions.unit(),
					decisions.foreignCpu()));
			String[] counted = Files.readString(calls).trim().split(" ");
			double perDecision = Double.parseDouble(counted[0]) / Math.max(1, Double.parseDouble(counted[1]));
			section.add(new Measurement(REJECTED_CALLS, "ours", perDecision, "calls/decision"));
			section.note(String.format(Locale.ROOT, "%s: %s script calls for %s decisions (%.5f per decision, about %.0f "
					+ "Redis calls/s), counted by Redis' INFO commandstats over the warm-up and the measurement", REJECTED,
					counted[0], counted[1], perDecision, perDecision * decisions.value()));
		}
		finally {
			Files.deleteIfExists(calls);
		}
	}

	@Override
	public SectionResult run(Settings settings) throws Exception {
		try (RedisProcess redis = RedisProcess.launch()) {
			Map<String, List<String>> params = new LinkedHashMap<>();
			params.put("keys", List.of(Integer.toString(KEYS)));
			List<Jmh.Fork> forks = Jmh.run(settings, RedisDecisionBenchmark.class, "ops/s",
					List.of("-D" + RedisDecisionBenchmark.PORT_PROPERTY + "=" + redis.port()), METHODS, params, THREADS,
					ITERATIONS, id());
			SectionResult section = new SectionResult();
			for (Jmh.Fork fork : forks) {
				section.add(fork.measurement(FIGURE));
			}
			section.compare(FIGURE, "ours", "Bucket4j", Comparison.Target.atLeast(2.5));
			section.compare(FIGURE, "ours", "raw EVALSHA", Comparison.Target.atLeast(1.2));
			rejected(settings, redis, params, section);
			return section;
		}
	}
}
