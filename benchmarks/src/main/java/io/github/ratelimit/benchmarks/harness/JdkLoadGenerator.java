package io.github.ratelimit.benchmarks.harness;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Load from the JDK's {@link HttpClient} when wrk is not installed: {@value LoadGenerator#CONNECTIONS}
 * threads sharing one HTTP/1.1 client, each sending its next request when the previous one is
 * answered. Heavier on the CPU than wrk, so it leaves less of a small machine to the server.
 */
public final class JdkLoadGenerator implements LoadGenerator {

	@Override
	public String name() {
		return "JDK HttpClient (" + CONNECTIONS + " threads)";
	}

	@Override
	public LoadResult run(URI uri, Duration duration) throws Exception {
		HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
		HttpRequest request = HttpRequest.newBuilder(uri).GET().build();
		AtomicLong failures = new AtomicLong();
		ExecutorService threads = Executors.newFixedThreadPool(CONNECTIONS);
		try {
			long start = System.nanoTime();
			long deadline = start + duration.toNanos();
			List<Future<long[]>> latencies = new ArrayList<>();
			for (int i = 0; i < CONNECTIONS; i++) {
				latencies.add(threads.submit(() -> loop(client, request, deadline, failures)));
			}
			long[] all = new long[0];
			for (Future<long[]> future : latencies) {
				long[] mine = future.get();
				int offset = all.length;
				all = Arrays.copyOf(all, offset + mine.length);
				System.arraycopy(mine, 0, all, offset, mine.length);
			}
			double seconds = (System.nanoTime() - start) / 1e9;
			Arrays.sort(all);
			return new LoadResult(all.length, seconds, failures.get(), percentile(all, 0.50), percentile(all, 0.99));
		}
		finally {
			threads.shutdownNow();
		}
	}

	private static long[] loop(HttpClient client, HttpRequest request, long deadline, AtomicLong failures) {
		long[] latencies = new long[1 << 16];
		int count = 0;
		while (true) {
			long sent = System.nanoTime();
			if (sent >= deadline) {
				return Arrays.copyOf(latencies, count);
			}
			try {
				HttpResponse<Void> response = client.send(request, HttpResponse.BodyHandlers.discarding());
				if (response.statusCode() / 100 != 2) {
					failures.incrementAndGet();
				}
			}
			catch (Exception ex) {
				failures.incrementAndGet();
				continue;
			}
			if (count == latencies.length) {
				latencies = Arrays.copyOf(latencies, count * 2);
			}
			latencies[count++] = System.nanoTime() - sent;
		}
	}

	private static double percentile(long[] sorted, double quantile) {
		if (sorted.length == 0) {
			return Double.NaN;
		}
		int index = (int) Math.min(sorted.length - 1, Math.ceil(quantile * sorted.length) - 1);
		return sorted[Math.max(0, index)] / 1e6;
	}
}
