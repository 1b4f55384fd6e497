package io.github.ratelimit.benchmarks.harness;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * Measures how much of the machine's CPU other processes take while a benchmark runs, from Linux's
 * {@code /proc/stat} (all CPUs) and {@code /proc/<pid>/stat} of this JVM and its descendants (JMH forks,
 * wrk, the sample apps; those that ended are in this JVM's children's times). Elsewhere it reports
 * nothing and never waits.
 */
public final class CpuMeter {

	private static final Path SYSTEM = Path.of("/proc/stat");

	private CpuMeter() {
	}

	/**
	 * CPU time counters at one instant, in clock ticks.
	 *
	 * @param total all CPUs' time
	 * @param busy all CPUs' time not idle
	 * @param ours this process's and its reaped children's time
	 */
	public record Snapshot(long total, long busy, long ours) {
	}

	/**
	 * Reads the counters.
	 * @return the snapshot, or {@code null} when the counters cannot be read (not Linux)
	 */
	public static Snapshot snapshot() {
		try {
			String[] cpu = Files.readAllLines(SYSTEM).get(0).trim().split("\\s+");
			long total = 0;
			for (int i = 1; i <= 8 && i < cpu.length; i++) {
				total += Long.parseLong(cpu[i]);
			}
			long idle = Long.parseLong(cpu[4]) + Long.parseLong(cpu[5]);
			long ours = processTicks(ProcessHandle.current().pid());
			for (ProcessHandle descendant : ProcessHandle.current().descendants().toList()) {
				ours += processTicks(descendant.pid());
			}
			return new Snapshot(total, total - idle, ours);
		}
		catch (IOException | RuntimeException ex) {
			return null;
		}
	}

	/** User and system time of a process and of its ended children; 0 when it is gone. */
	private static long processTicks(long pid) {
		try {
			// utime, stime, cutime, cstime
			return ticks(Files.readString(Path.of("/proc", Long.toString(pid), "stat")), 14, 17);
		}
		catch (IOException | RuntimeException ex) {
			return 0;
		}
	}

	/**
	 * Returns the CPU time of a process's JIT compiler threads (named {@code C1 CompilerThre...} and
	 * {@code C2 CompilerThre...} in {@code /proc/<pid>/task/<tid>/comm}): while it grows, the process is
	 * still compiling.
	 * @param pid the process
	 * @return clock ticks (100 a second), or {@code -1} when they cannot be read (not Linux)
	 */
	public static long compilerTicks(long pid) {
		Path tasks = Path.of("/proc", Long.toString(pid), "task");
		if (!Files.isDirectory(tasks)) {
			return -1;
		}
		long ticks = 0;
		try (DirectoryStream<Path> threads = Files.newDirectoryStream(tasks)) {
			for (Path thread : threads) {
				try {
					String comm = Files.readString(thread.resolve("comm"), StandardCharsets.US_ASCII);
					if (comm.startsWith("C1 CompilerThre") || comm.startsWith("C2 CompilerThre")) {
						// utime, stime
						ticks += ticks(Files.readString(thread.resolve("stat"), StandardCharsets.US_ASCII), 14, 15);
					}
				}
				catch (IOException ex) {
					// The thread ended meanwhile.
				}
			}
		}
		catch (IOException | UncheckedIOException ex) {
			return -1;
		}
		return ticks;
	}

	/**
	 * Sums fields of a {@code /proc} {@code stat} line, counted from 1 as in {@code proc(5)}, after the
	 * command name in parentheses (which may hold spaces and parentheses).
	 * @param stat the line
	 * @param from the first field, e.g. 14 (utime)
	 * @param to the last field, e.g. 15 (stime)
	 * @return the sum
	 */
	public static long ticks(String stat, int from, int to) {
		// The first field after the name is field 3 (the state).
		String[] fields = stat.substring(stat.lastIndexOf(')') + 2).trim().split("\\s+");
		long ticks = 0;
		for (int field = from; field <= to; field++) {
			ticks += Long.parseLong(fields[field - 3]);
		}
		return ticks;
	}

	/**
	 * Returns the share of all CPUs that other processes used between two snapshots.
	 * @param before the earlier snapshot, or {@code null}
	 * @param after the later snapshot, or {@code null}
	 * @return from 0 to 1, or {@code NaN} when unknown
	 */
	public static double foreignShare(Snapshot before, Snapshot after) {
		if (before == null || after == null || after.total() <= before.total()) {
			return Double.NaN;
		}
		long foreign = (after.busy() - before.busy()) - (after.ours() - before.ours());
		return Math.max(0, Math.min(1, foreign / (double) (after.total() - before.total())));
	}

	/**
	 * Waits until other processes leave the CPUs nearly idle (under 10% for a second), at most
	 * {@code maxSeconds}.
	 * @param maxSeconds the longest wait; 0 never waits
	 * @return the seconds waited beyond the one-second check
	 * @throws InterruptedException when interrupted
	 */
	public static long awaitIdle(long maxSeconds) throws InterruptedException {
		long start = System.nanoTime();
		while ((System.nanoTime() - start) / 1_000_000_000L < maxSeconds) {
			Snapshot before = snapshot();
			Thread.sleep(1000);
			double share = foreignShare(before, snapshot());
			if (Double.isNaN(share) || share < 0.10) {
				break;
			}
		}
		return Math.max(0, (System.nanoTime() - start) / 1_000_000_000L - 1);
	}

	public static String percent(double share) {
		return Double.isNaN(share) ? "?" : String.format(Locale.ROOT, "%.0f%%", 100 * share);
	}
}
