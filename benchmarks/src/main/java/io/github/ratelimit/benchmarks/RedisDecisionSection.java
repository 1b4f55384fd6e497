package io.github.ratelimit.benchmarks;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.benchmarks.harness.Comparison;
import io.github.ratelimit.benchmarks.harness.Jmh;
import io.github.ratelimit.benchmarks.harness.Measurement;
import io.github.ratelimit.benchmarks.harness.Section;
import io.github.ratelimit.benchmarks.harness.SectionResult;
import io.github.ratelimit.benchmarks.harness.Settings;
import io.github.ratelimit.benchmarks.report.Format;
import io.github.ratelimit.testsupport.RedisProcess;

/**
 * Redis decision throughput (issue 6, item 2): ours ({@code RedisRateLimitStore} on Lettuce) against
 * Bucket4j's Lettuce compare-and-swap proxy manager and a raw Lettuce {@code EVALSHA} loop of a
 * minimal GCRA script (the ceiling); token bucket, 100,000 keys, 16 threads, on a {@code redis-server}
 * the section starts on a free loopback port and stops afterwards.
 */
final class RedisDecisionSection implements Section {

	static final List<String> METHODS = List.of("ours", "oursUncoalesced", "bucket4j", "raw");

	static final int KEYS = 100_000;

	static final int THREADS = 16;

	static final String FIGURE = String.format(Locale.ROOT, "%,d keys, all allowed", KEYS);

	static final String REJECTED = "one key, all rejected";

	static final String REJECTED_CALLS = "one key, all rejected: Redis script calls per decision";

	static final String REJECTED_CALLS_PER_SECOND = "one key, all rejected: Redis script calls/s";

	static final String P50 = "1 thread, p50 latency per decision";

	static final String P99 = "1 thread, p99 latency per decision";

	/**
	 * The latency rows: per implementation, blocks of this long, taking turns, after a warm-up of each. Each
	 * round of blocks starts with the next implementation, and every implementation leads as many rounds:
	 * in an A/B on this machine, whichever went first after another's block measured some 5% slower.
	 */
	private static final int LATENCY_BLOCK_MILLIS = 1_500;

	private static final int LATENCY_BLOCKS = 6;

	private static final int LATENCY_WARM_UP_MILLIS = 5_000;

	/** One fork per implementation and round: 8 x 1 s warm-up, then 3 x 6 s measured. */
	private static final Jmh.Iterations ITERATIONS = new Jmh.Iterations(1, 8, 3, 6_000);

	/**
	 * The throughput row runs every implementation's fork this many times, the implementations taking turns
	 * (ours, ..., raw, then ours again), and pools each implementation's measured iterations: one fork each,
	 * one after the other, let a drift of this VM's speed between forks move a ratio by a fifth.
	 */
	static final int ROUNDS = 2;

	@Override
	public String id() {
		return "redis";
	}

	@Override
	public String title() {
		return "Redis decisions: ops/s at " + THREADS + " threads (higher is better), latency at 1 thread (lower is better), "
				+ "token bucket";
	}

	@Override
	public String method() {
		return "JMH throughput, " + THREADS + " threads in a closed loop (each waits for its answer), "
				+ ITERATIONS.describe() + "; " + ROUNDS + " rounds, the implementations taking turns in each, the "
				+ "figure the median of an implementation's measured iterations of all rounds; 2 GB heap, G1; " + KEYS
				+ " keys asked in random order, a token bucket "
				+ "of " + RedisDecisionBenchmark.LIMIT + " per hour per key (every request allowed); one redis-server "
				+ "(" + RedisProcess.version() + ", no persistence) started by the run on a free loopback port, on the "
				+ "same 2 cores as the client, flushed before each implementation; one shared Lettuce connection each. "
				+ "ours = RedisRateLimitStore.tryAcquire(new Acquisition(...)) on a LettuceConnectionFactory; "
				+ "Bucket4j = bucket4j_jdk17-lettuce 8.19.0 compare-and-swap proxy manager, one prebuilt BucketProxy "
				+ "per key, tryConsumeAndReturnRemaining(1), keys expiring when refilled; "
				+ "raw EVALSHA = Lettuce's synchronous evalsha of a 9-line GCRA script (server TIME, GET, SET PX), "
				+ "keys and arguments prebuilt, an integer reply. " + REJECTED + ": ours on one key whose budget is spent "
				+ "(every request rejected; coalescing and the rejection cache on, as by default), " + THREADS
				+ " threads, and the script calls Redis counted meanwhile. " + P50 + " and p99: one thread in this JVM "
				+ "asking ours (coalescing on, as by default), ours with coalescing off and the raw loop in turn, "
				+ LATENCY_BLOCKS + " blocks of " + LATENCY_BLOCK_MILLIS + " ms each (each round led by the next of the three) "
				+ "after a " + LATENCY_WARM_UP_MILLIS / 1000 + " s warm-up of each, "
				+ "every call timed with System.nanoTime(); the same 100,000 keys and limit.";
	}

	@Override
	public long estimatedSeconds(Settings settings) {
		return (long) (ROUNDS * METHODS.size() + 1) * (settings.quick() ? 4 : ITERATIONS.seconds() + 2)
				+ (settings.quick() ? 4 : (3L * LATENCY_WARM_UP_MILLIS + 3L * LATENCY_BLOCKS * LATENCY_BLOCK_MILLIS) / 1000);
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
			section.add(new Measurement(REJECTED_CALLS_PER_SECOND, "ours", perDecision * decisions.value(), "calls/s"));
			section.note(String.format(Locale.ROOT, "%s: %s script calls for %s decisions (%.5f per decision, about %.0f "
					+ "Redis calls/s), counted by Redis' INFO commandstats over the warm-up and the measurement", REJECTED,
					counted[0], counted[1], perDecision, perDecision * decisions.value()));
		}
		finally {
			Files.deleteIfExists(calls);
		}
	}

	/**
	 * p50 and p99 of one decision at one thread, ours against the raw loop: does coalescing cost a request
	 * that is alone? Both in this JVM, taking turns in blocks, so that a change of the machine's load
	 * falls on both.
	 */
	private void latency(Settings settings, RedisProcess redis, SectionResult section) throws Exception {
		// Each set-up flushes the database: all three start on what the warm-ups wrote (the keys are named alike).
		RedisDecisionBenchmark ours = new RedisDecisionBenchmark();
		ours.keys = KEYS;
		ours.setUp("ours", redis.port());
		RedisDecisionBenchmark uncoalesced = new RedisDecisionBenchmark();
		uncoalesced.keys = KEYS;
		uncoalesced.setUp("oursUncoalesced", redis.port());
		RedisDecisionBenchmark raw = new RedisDecisionBenchmark();
		raw.keys = KEYS;
		raw.setUp("raw", redis.port());
		try {
			RedisDecisionBenchmark.Cursor cursor = new RedisDecisionBenchmark.Cursor();
			cursor.setUp();
			int block = settings.quick() ? 200 : LATENCY_BLOCK_MILLIS;
			int warmUp = settings.quick() ? 500 : LATENCY_WARM_UP_MILLIS;
			time(ours, true, cursor, warmUp, null);
			time(uncoalesced, true, cursor, warmUp, null);
			time(raw, false, cursor, warmUp, null);
			LatencySamples oursSamples = new LatencySamples();
			LatencySamples uncoalescedSamples = new LatencySamples();
			LatencySamples rawSamples = new LatencySamples();
			for (int i = 0; i < LATENCY_BLOCKS; i++) {
				for (int turn = 0; turn < 3; turn++) {
					switch ((i + turn) % 3) {
						case 0 -> time(ours, true, cursor, block, oursSamples);
						case 1 -> time(uncoalesced, true, cursor, block, uncoalescedSamples);
						default -> time(raw, false, cursor, block, rawSamples);
					}
				}
			}
			String off = Jmh.implementation("oursUncoalesced");
			section.add(new Measurement(P50, "ours", oursSamples.quantile(0.5), "µs"));
			section.add(new Measurement(P50, off, uncoalescedSamples.quantile(0.5), "µs"));
			section.add(new Measurement(P50, "raw EVALSHA", rawSamples.quantile(0.5), "µs"));
			section.add(new Measurement(P99, "ours", oursSamples.quantile(0.99), "µs"));
			section.add(new Measurement(P99, off, uncoalescedSamples.quantile(0.99), "µs"));
			section.add(new Measurement(P99, "raw EVALSHA", rawSamples.quantile(0.99), "µs"));
			section.compare(P50, "ours", "raw EVALSHA", Comparison.Target.atMost(1.1));
			section.compare(P50, "ours", off, null);
			section.compare(P99, "ours", "raw EVALSHA", null);
			section.compare(P99, "ours", off, null);
			section.note(String.format(Locale.ROOT, "Latency at 1 thread: %,d decisions of ours, %,d with coalescing off, "
					+ "%,d of the raw loop, in %d alternating blocks of %d ms each.", oursSamples.size,
					uncoalescedSamples.size, rawSamples.size, LATENCY_BLOCKS, block));
		}
		finally {
			ours.tearDown();
			uncoalesced.tearDown();
			raw.tearDown();
		}
	}

	private static void time(RedisDecisionBenchmark benchmark, boolean ours, RedisDecisionBenchmark.Cursor cursor,
			int millis, @Nullable LatencySamples samples) {
		long end = System.nanoTime() + millis * 1_000_000L;
		long now = System.nanoTime();
		while (now < end) {
			Object decision = ours ? benchmark.ours(cursor) : benchmark.raw(cursor);
			long after = System.nanoTime();
			if (decision == null) {
				throw new IllegalStateException("no decision");
			}
			if (samples != null) {
				samples.add(after - now);
			}
			now = after;
		}
	}

	/** Latencies in nanoseconds, growing as needed. */
	private static final class LatencySamples {

		private long[] values = new long[1 << 16];

		private int size;

		void add(long nanos) {
			if (this.size == this.values.length) {
				this.values = java.util.Arrays.copyOf(this.values, this.size * 2);
			}
			this.values[this.size++] = nanos;
		}

		/** The quantile in microseconds. */
		double quantile(double q) {
			long[] sorted = java.util.Arrays.copyOf(this.values, this.size);
			java.util.Arrays.sort(sorted);
			double[] micros = new double[sorted.length];
			for (int i = 0; i < sorted.length; i++) {
				micros[i] = sorted[i] / 1000.0;
			}
			return Jmh.quantile(micros, q);
		}
	}

	@Override
	public SectionResult run(Settings settings) throws Exception {
		try (RedisProcess redis = RedisProcess.launch()) {
			Map<String, List<String>> params = new LinkedHashMap<>();
			params.put("keys", List.of(Integer.toString(KEYS)));
			List<Jmh.Fork> forks = new ArrayList<>();
			for (int round = 0; round < (settings.quick() ? 1 : ROUNDS); round++) {
				forks.addAll(Jmh.run(settings, RedisDecisionBenchmark.class, "ops/s",
						List.of("-D" + RedisDecisionBenchmark.PORT_PROPERTY + "=" + redis.port()), METHODS, params,
						THREADS, ITERATIONS, id() + "-round" + (round + 1)));
			}
			SectionResult section = new SectionResult();
			for (String method : METHODS) {
				section.add(Jmh.Fork.pooled(forks.stream().filter((fork) -> fork.method().equals(method)).toList())
					.measurement(FIGURE));
			}
			section.note("Per round, decisions/s of " + String.join("; ", METHODS.stream()
				.map((method) -> Jmh.implementation(method) + ": " + String.join(", ", forks.stream()
					.filter((fork) -> fork.method().equals(method))
					.map((fork) -> Format.number(fork.measurement(FIGURE).value()))
					.toList()))
				.toList()) + ".");
			section.compare(FIGURE, "ours", "Bucket4j", Comparison.Target.atLeast(2.5));
			section.compare(FIGURE, "ours", "raw EVALSHA", Comparison.Target.atLeast(1.2));
			section.compare(FIGURE, "ours", "ours, coalescing off", null);
			rejected(settings, redis, params, section);
			latency(settings, redis, section);
			return section;
		}
	}
}
