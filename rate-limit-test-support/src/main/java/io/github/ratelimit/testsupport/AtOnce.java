package io.github.ratelimit.testsupport;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.IntFunction;

/**
 * Sends requests at once, from as many threads, released together: what an attacker with that many
 * connections does.
 */
public final class AtOnce {

	private AtOnce() {
	}

	/**
	 * Sends {@code count} requests at once and counts their answers by status.
	 * @param count how many
	 * @param request the {@code i}-th request, returning its status
	 * @return the number of answers of each status
	 * @throws Exception when a request failed
	 */
	public static Map<Integer, Integer> statuses(int count, IntFunction<Callable<Integer>> request) throws Exception {
		ExecutorService pool = Executors.newFixedThreadPool(count);
		try {
			CountDownLatch start = new CountDownLatch(1);
			List<Future<Integer>> answers = new ArrayList<>(count);
			for (int i = 0; i < count; i++) {
				Callable<Integer> one = request.apply(i);
				answers.add(pool.submit(() -> {
					start.await();
					return one.call();
				}));
			}
			start.countDown();
			Map<Integer, Integer> statuses = new TreeMap<>();
			for (Future<Integer> answer : answers) {
				statuses.merge(answer.get(), 1, Integer::sum);
			}
			return statuses;
		}
		finally {
			pool.shutdownNow();
		}
	}

}
