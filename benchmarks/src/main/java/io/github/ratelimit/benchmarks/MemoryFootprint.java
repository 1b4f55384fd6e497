package io.github.ratelimit.benchmarks;

import java.lang.management.ManagementFactory;
import java.lang.ref.Reference;
import java.util.Locale;
import java.util.function.Consumer;

import io.github.ratelimit.benchmarks.peers.Bucket4jLimiter;
import io.github.ratelimit.benchmarks.peers.FloorLimiter;
import io.github.ratelimit.benchmarks.peers.OursLimiter;
import io.github.ratelimit.benchmarks.peers.Policy;

/**
 * Measures the heap one implementation retains per tracked key; run in a fresh JVM by
 * {@link MemorySection} (with the serial collector, whose full collections compact, so that "used
 * after a full GC" is the live data).
 * <p>
 * Method: used heap after full collections, before and after asking once for each of {@code keys}
 * distinct keys. The keys are IPv4-like strings of 8 to 11 characters, built before the store; the
 * figure per key includes the key string (the store is what keeps it alive), and the key string's
 * own size is printed apart. The budget (one request an hour) keeps every key from expiring during
 * the measurement.
 */
public final class MemoryFootprint {

	private MemoryFootprint() {
	}

	/**
	 * Prints one {@code RESULT} line.
	 * @param args the implementation ({@code ours}, {@code bucket4j} or {@code floor}) and the number of keys
	 * @throws InterruptedException when interrupted while letting the cache settle
	 */
	public static void main(String[] args) throws InterruptedException {
		String implementation = args[0];
		int keys = Integer.parseInt(args[1]);
		System.out.println(measure(implementation, keys));
	}

	static String measure(String implementation, int keys) throws InterruptedException {
		long base = usedAfterFullGc();
		String[] names = new String[keys];
		for (int i = 0; i < keys; i++) {
			names[i] = Keys.name(i);
		}
		long withNames = usedAfterFullGc();
		Consumer<String> limiter;
		long size;
		switch (implementation) {
			case "ours" -> {
				OursLimiter ours = new OursLimiter(Policy.REJECTED, DecisionBenchmark.MAXIMUM_SIZE);
				limiter = ours::tryAcquire;
				fill(limiter, names);
				size = ours.size();
			}
			case "bucket4j" -> {
				Bucket4jLimiter bucket4j = new Bucket4jLimiter(Policy.REJECTED, DecisionBenchmark.MAXIMUM_SIZE);
				limiter = bucket4j::tryAcquire;
				fill(limiter, names);
				size = bucket4j.size();
			}
			case "floor" -> {
				FloorLimiter floor = new FloorLimiter(DecisionBenchmark.MAXIMUM_SIZE);
				limiter = floor::tryAcquire;
				fill(limiter, names);
				size = floor.size();
			}
			default -> throw new IllegalArgumentException("Unknown implementation " + implementation);
		}
		// Let Caffeine's maintenance (on the common pool) drain its buffers before measuring.
		Thread.sleep(500);
		long arrayBytes = 16 + 4L * keys;
		long keyStringBytes = withNames - base - arrayBytes;
		names = null;
		long withStore = usedAfterFullGc();
		Reference.reachabilityFence(limiter);
		return String.format(Locale.ROOT, "RESULT implementation=%s keys=%d tracked=%d bytesPerKey=%.1f keyStringBytesPerKey=%.1f",
				implementation, keys, size, (withStore - base) / (double) keys, keyStringBytes / (double) keys);
	}

	private static void fill(Consumer<String> limiter, String[] names) {
		for (String name : names) {
			limiter.accept(name);
		}
	}

	private static long usedAfterFullGc() throws InterruptedException {
		long used = Long.MAX_VALUE;
		for (int i = 0; i < 4; i++) {
			System.gc();
			Thread.sleep(50);
			used = Math.min(used, ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
		}
		return used;
	}
}
