package io.github.ratelimit.benchmarks;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.github.ratelimit.benchmarks.harness.Comparison;
import io.github.ratelimit.benchmarks.harness.Measurement;
import io.github.ratelimit.benchmarks.harness.Section;
import io.github.ratelimit.benchmarks.harness.SectionResult;
import io.github.ratelimit.benchmarks.harness.Settings;
import io.github.ratelimit.testsupport.RedisProcess;

/**
 * Retained heap per tracked key at 1,000,000 keys: ours against Bucket4j (a local bucket per key in
 * Caffeine) and the floor (an {@code AtomicLong} per key in Caffeine), each in a fresh JVM running
 * {@link MemoryFootprint}.
 */
public final class MemorySection implements Section {

	public static final int KEYS = 1_000_000;

	public static final double TARGET_BYTES = 176;

	private static final Pattern RESULT = Pattern.compile(
			"RESULT implementation=(\\S+) keys=(\\d+) tracked=(\\d+) bytesPerKey=([\\d.]+) keyStringBytesPerKey=([\\d.]+)");

	@Override
	public String id() {
		return "memory";
	}

	@Override
	public String title() {
		return "Memory: retained heap per tracked key at 1,000,000 keys, and Redis memory per key, bytes, lower is better";
	}

	@Override
	public String method() {
		return "A fresh JVM per implementation (-Xmx3g, serial GC, compressed oops): used heap after full GCs, "
				+ "before and after one request for each of 1,000,000 distinct IPv4-like keys; "
				+ "includes the key string, the map's entry and table slot, the state and Caffeine's frequency sketch. "
				+ "Redis rows: MEMORY USAGE of one key after one request (limit 100 per minute), on a redis-server "
				+ "the run starts on a free loopback port.";
	}

	@Override
	public long estimatedSeconds(Settings settings) {
		return 3 * 8;
	}

	@Override
	public SectionResult run(Settings settings) throws Exception {
		SectionResult section = new SectionResult();
		Map<String, String> implementations = new LinkedHashMap<>();
		implementations.put("ours", "ours");
		implementations.put("bucket4j", "Bucket4j");
		implementations.put("floor", "floor");
		String figure = "bytes per key";
		double keyString = Double.NaN;
		for (Map.Entry<String, String> implementation : implementations.entrySet()) {
			Matcher result = measure(settings, implementation.getKey());
			long tracked = Long.parseLong(result.group(3));
			if (tracked != KEYS) {
				section.note(implementation.getValue() + " tracked " + tracked + " keys instead of " + KEYS + ".");
			}
			section.add(new Measurement(figure, implementation.getValue(), Double.parseDouble(result.group(4)), "B"));
			keyString = Double.parseDouble(result.group(5));
		}
		section.add(new Measurement(figure, "target", TARGET_BYTES, "B"));
		section.compare(figure, "ours", "target", Comparison.Target.atMost(1));
		section.compare(figure, "ours", "Bucket4j", null);
		section.compare(figure, "ours", "floor", null);
		section.note(String.format(java.util.Locale.ROOT, "Of each figure, %.0f B is the key string itself.", keyString));
		if (RedisProcess.onPath("redis-server").isPresent()) {
			RedisMemory.measure(section);
		}
		else {
			section.note("Redis MEMORY USAGE not measured: redis-server is not installed.");
		}
		return section;
	}

	private static Matcher measure(Settings settings, String implementation) throws IOException, InterruptedException {
		List<String> command = new ArrayList<>(List.of(javaExecutable(), "-Xms3g", "-Xmx3g", "-XX:+UseSerialGC",
				"-cp", System.getProperty("java.class.path"), MemoryFootprint.class.getName(), implementation,
				Integer.toString(KEYS)));
		Files.createDirectories(settings.logDirectory());
		Path log = settings.logDirectory().resolve("memory-" + implementation + ".log");
		Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
		if (!process.waitFor(5, TimeUnit.MINUTES)) {
			process.destroyForcibly();
			throw new IllegalStateException("Memory measurement of " + implementation + " did not finish; see " + log);
		}
		String output = Files.readString(log, StandardCharsets.UTF_8);
		Matcher matcher = RESULT.matcher(output);
		if (process.exitValue() != 0 || !matcher.find()) {
			throw new IllegalStateException("Memory measurement of " + implementation + " failed; see " + log + ":\n" + output);
		}
		return matcher;
	}

	public static String javaExecutable() {
		return Path.of(System.getProperty("java.home"), "bin", "java").toString();
	}
}
