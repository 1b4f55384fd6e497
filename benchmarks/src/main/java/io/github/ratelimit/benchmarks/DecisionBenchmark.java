package io.github.ratelimit.benchmarks;

import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import io.github.bucket4j.ConsumptionProbe;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.infra.BenchmarkParams;

import io.github.ratelimit.core.Decision;
import io.github.ratelimit.core.RateLimitClock;
import io.github.ratelimit.testsupport.BareState;

import io.github.ratelimit.benchmarks.peers.Bucket4jLimiter;
import io.github.ratelimit.benchmarks.peers.FloorLimiter;
import io.github.ratelimit.benchmarks.peers.OursLimiter;
import io.github.ratelimit.benchmarks.peers.Policy;

/**
 * Decisions per microsecond of each implementation, on {@code keys} distinct keys asked in random order
 * (one hot key when {@code keys = 1}), under a budget that allows every request or rejects nearly all.
 * Every key is seen once during set-up, so the measurement is of known keys (under {@code rejected},
 * that first request spent each key's only token). Requests carry keys equal to, but not the same
 * objects as, the keys the maps hold (see {@link Keys}).
 * <p>
 * Only the implementation a method measures is built, so a fork holds one map of keys.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class DecisionBenchmark {

	/** The bound on tracked keys of every map: our store's default {@code maximum-size}. */
	public static final int MAXIMUM_SIZE = 1_000_000;

	@Param({ "1", "100000" })
	public int keys;

	@Param({ "allowed", "rejected" })
	public String policy;

	private Keys keySet;

	private OursLimiter ours;

	private BareState[] tokenBuckets;

	private Bucket4jLimiter bucket4j;

	private FloorLimiter floor;

	@Setup(Level.Trial)
	public void setUp(BenchmarkParams params) {
		String method = params.getBenchmark().substring(params.getBenchmark().lastIndexOf('.') + 1);
		setUp(method);
	}

	/**
	 * Builds the keys and the one implementation a method measures, and shows it every key once.
	 * @param method the benchmark method's name
	 */
	public void setUp(String method) {
		Policy budget = Policy.of(this.policy);
		this.keySet = new Keys(this.keys);
		switch (method) {
			case "ours" -> {
				this.ours = new OursLimiter(budget, MAXIMUM_SIZE);
				forEachKey((key) -> this.ours.tryAcquire(key));
			}
			case "oursTokenBucketOnly" -> {
				this.tokenBuckets = new BareState[this.keys];
				for (int i = 0; i < this.keys; i++) {
					this.tokenBuckets[i] = BareState.of(budget.limit());
					this.tokenBuckets[i].tryAcquire(RateLimitClock.SYSTEM.nanos(), 1, 0);
				}
			}
			case "bucket4j" -> {
				this.bucket4j = new Bucket4jLimiter(budget, MAXIMUM_SIZE);
				forEachKey((key) -> this.bucket4j.tryAcquire(key));
			}
			case "floor" -> {
				this.floor = new FloorLimiter(MAXIMUM_SIZE);
				forEachKey((key) -> this.floor.tryAcquire(key));
			}
			case "floorExpiring" -> {
				this.floor = new FloorLimiter(MAXIMUM_SIZE, budget.idleExpiry());
				forEachKey((key) -> this.floor.tryAcquire(key));
			}
			default -> throw new IllegalArgumentException("No implementation for benchmark method " + method);
		}
	}

	private void forEachKey(java.util.function.Consumer<String> action) {
		for (int i = 0; i < this.keySet.count(); i++) {
			action.accept(this.keySet.get(i));
		}
	}

	/** Our store, exactly as the filter calls it. */
	@Benchmark
	public Decision ours(Cursor cursor) {
		return this.ours.tryAcquire(this.keySet.request(this.keySet.indexAt(cursor.position++)));
	}

	/** Breakdown: our token bucket alone, its state found by array index instead of by the store. */
	@Benchmark
	public Decision oursTokenBucketOnly(Cursor cursor) {
		return this.tokenBuckets[this.keySet.indexAt(cursor.position++)].tryAcquire(RateLimitClock.SYSTEM.nanos(), 1,
				0);
	}

	/** Peer: one Bucket4j local bucket per key in a Caffeine cache. */
	@Benchmark
	public ConsumptionProbe bucket4j(Cursor cursor) {
		return this.bucket4j.tryAcquire(this.keySet.request(this.keySet.indexAt(cursor.position++)));
	}

	/** Lower bound: one Caffeine lookup and one compare-and-set. */
	@Benchmark
	public boolean floor(Cursor cursor) {
		return this.floor.tryAcquire(this.keySet.request(this.keySet.indexAt(cursor.position++)));
	}

	/** Breakdown: the floor on a cache configured as our store's (expiring, on our clock). */
	@Benchmark
	public boolean floorExpiring(Cursor cursor) {
		return this.floor.tryAcquire(this.keySet.request(this.keySet.indexAt(cursor.position++)));
	}

	/**
	 * Where a thread is in the shared random sequence of keys; each thread starts somewhere else.
	 */
	@State(Scope.Thread)
	public static class Cursor {

		int position;

		@Setup(Level.Trial)
		public void setUp() {
			this.position = ThreadLocalRandom.current().nextInt();
		}
	}
}
