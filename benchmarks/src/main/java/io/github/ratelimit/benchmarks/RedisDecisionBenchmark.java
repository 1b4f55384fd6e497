package io.github.ratelimit.benchmarks;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.IntStream;

import io.github.bucket4j.ConsumptionProbe;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.infra.BenchmarkParams;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.ratelimit.benchmarks.peers.Bucket4jRedisLimiter;
import io.github.ratelimit.benchmarks.peers.RawEvalshaLimiter;
import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.Decision;
import io.github.ratelimit.core.Limit;
import io.github.ratelimit.redis.RedisRateLimitStore;

/**
 * Redis decisions per second: a token bucket of 1,000 requests per hour (burst 1,000) per key, on
 * {@code keys} distinct keys asked in random order by 16 threads (closed loop: each thread waits for
 * its answer before asking again), every request allowed. Each implementation talks to the Redis server
 * whose port is in the system property {@value #PORT_PROPERTY} over one shared Lettuce connection:
 * <ul>
 * <li>{@link #ours}: {@link RedisRateLimitStore} on a {@link LettuceConnectionFactory}, exactly as the
 * filter calls it (one {@link Acquisition} per request, the Redis key built per call);
 * {@link #oursUncoalesced} the same with coalescing off;</li>
 * <li>{@link #bucket4j}: {@link Bucket4jRedisLimiter}, Bucket4j's Lettuce compare-and-swap proxy manager
 * (8.19.0), {@code tryConsumeAndReturnRemaining(1)};</li>
 * <li>{@link #raw}: {@link RawEvalshaLimiter}, the ceiling: a synchronous {@code EVALSHA} of a minimal GCRA
 * script.</li>
 * </ul>
 * Only the implementation a method measures is built; the database is flushed before each.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Threads(16)
public class RedisDecisionBenchmark {

	/** The system property that holds the Redis server's port (on 127.0.0.1). */
	public static final String PORT_PROPERTY = "ratelimit.benchmarks.redis.port";

	/** The system property naming the file {@link #oursRejected}'s tear-down writes its script calls and decisions to. */
	public static final String CALLS_FILE_PROPERTY = "ratelimit.benchmarks.redis.calls-file";

	static final String LIMIT_ID = "redis-bench";

	static final long LIMIT = 1000;

	static final Duration PERIOD = Duration.ofHours(1);

	@Param({ "100000" })
	public int keys;

	private Keys keySet;

	private LettuceConnectionFactory connectionFactory;

	private RedisRateLimitStore ours;

	/** The one key of {@link #oursRejected}, spent at set-up. */
	private Acquisition rejected;

	private final LongAdder decisions = new LongAdder();

	private long scriptCallsBefore = -1;

	private Limit limit;

	private RedisClient client;

	private StatefulRedisConnection<byte[], byte[]> connection;

	private Bucket4jRedisLimiter bucket4j;

	private RawEvalshaLimiter raw;

	@Setup(Level.Trial)
	public void setUp(BenchmarkParams params) {
		String method = params.getBenchmark().substring(params.getBenchmark().lastIndexOf('.') + 1);
		setUp(method, Integer.getInteger(PORT_PROPERTY, 6379));
	}

	/**
	 * Builds the keys and the one implementation a method measures, on an empty database.
	 * @param method the benchmark method's name
	 * @param port the Redis server's port on 127.0.0.1
	 */
	public void setUp(String method, int port) {
		this.keySet = new Keys(this.keys);
		this.limit = Limit.builder().algorithm(Algorithm.TOKEN_BUCKET).limit(LIMIT).period(PERIOD).build();
		this.client = RedisClient.create("redis://127.0.0.1:" + port);
		this.connection = this.client.connect(ByteArrayCodec.INSTANCE);
		this.connection.sync().flushall();
		switch (method) {
			case "ours", "oursRejected", "oursUncoalesced" -> {
				this.connectionFactory = new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", port));
				this.connectionFactory.afterPropertiesSet();
				this.connectionFactory.start();
				// A generous timeout: a decision Redis did not answer in time would be a (fast) fallback; the
				// tear-down fails the benchmark when there was any.
				this.ours = RedisRateLimitStore.builder(this.connectionFactory)
					.timeout(Duration.ofSeconds(5))
					.coalescing(!method.equals("oursUncoalesced"))
					.build();
				if (method.equals("oursRejected")) {
					this.rejected = new Acquisition(LIMIT_ID, this.limit, "one-key", 1);
					while (this.ours.tryAcquire(this.rejected).isAllowed()) {
						// spend the key's budget: every measured request is rejected
					}
					this.scriptCallsBefore = scriptCalls();
				}
			}
			case "bucket4j" -> this.bucket4j = new Bucket4jRedisLimiter(this.connection, redisKeys(), LIMIT, PERIOD);
			case "raw" -> this.raw = new RawEvalshaLimiter(this.connection, redisKeys(),
					this.limit.emissionIntervalNanos() / 1000, this.limit.emissionIntervalNanos() / 1000 * LIMIT);
			default -> throw new IllegalArgumentException("No implementation for benchmark method " + method);
		}
	}

	@TearDown(Level.Trial)
	public void tearDown() {
		try {
			String callsFile = System.getProperty(CALLS_FILE_PROPERTY);
			if (this.scriptCallsBefore >= 0 && callsFile != null) {
				// Redis' own count of script calls, against the decisions asked for: the rejection cache's effect.
				Files.writeString(Path.of(callsFile), (scriptCalls() - this.scriptCallsBefore) + " " + this.decisions.sum());
			}
			if (this.ours != null) {
				long fallbacks = this.ours.fallbacks();
				this.ours.close();
				if (fallbacks > 0) {
					throw new IllegalStateException(fallbacks + " decisions of ours were fallbacks, not Redis' answers ("
							+ this.ours.errors() + " errors): the figure would be wrong");
				}
			}
		}
		catch (java.io.IOException ex) {
			throw new java.io.UncheckedIOException(ex);
		}
		finally {
			if (this.connectionFactory != null) {
				this.connectionFactory.destroy();
			}
			this.connection.close();
			this.client.shutdown();
		}
	}

	/** The same keys as our store writes, for the peers too, so that Redis sees keys of one length. */
	private List<byte[]> redisKeys() {
		return IntStream.range(0, this.keys)
			.mapToObj((i) -> ("rate-limit:{" + LIMIT_ID + ":" + this.keySet.get(i) + "}").getBytes(StandardCharsets.UTF_8))
			.toList();
	}

	/**
	 * Script calls Redis ran since start ({@code EVALSHA} and {@code EVAL} of {@code INFO commandstats}).
	 * @return the count
	 */
	long scriptCalls() {
		long calls = 0;
		String stats = new String(this.connection.sync().info("commandstats").getBytes(StandardCharsets.UTF_8),
				StandardCharsets.UTF_8);
		for (String line : stats.split("\r?\n")) {
			if (line.startsWith("cmdstat_evalsha:") || line.startsWith("cmdstat_eval:")) {
				String field = line.substring(line.indexOf("calls=") + 6);
				calls += Long.parseLong(field.substring(0, field.indexOf(',')));
			}
		}
		return calls;
	}

	/** Ours on one key whose budget is spent: every request rejected (Redis once, then the rejection cache). */
	@Benchmark
	public Decision oursRejected() {
		this.decisions.increment();
		return this.ours.tryAcquire(this.rejected);
	}

	/** Our Redis store, exactly as the filter calls it. */
	@Benchmark
	public Decision ours(Cursor cursor) {
		return this.ours.tryAcquire(new Acquisition(LIMIT_ID, this.limit, this.keySet.request(this.keySet.indexAt(cursor.position++)), 1));
	}

	/** Ours with coalescing off: one script call per decision, to compare within one run. */
	@Benchmark
	public Decision oursUncoalesced(Cursor cursor) {
		return ours(cursor);
	}

	/** Peer: Bucket4j's Lettuce compare-and-swap proxy manager. */
	@Benchmark
	public ConsumptionProbe bucket4j(Cursor cursor) {
		return this.bucket4j.tryAcquire(this.keySet.indexAt(cursor.position++));
	}

	/** Ceiling: a raw Lettuce {@code EVALSHA} loop of a minimal GCRA script. */
	@Benchmark
	public Long raw(Cursor cursor) {
		return this.raw.tryAcquire(this.keySet.indexAt(cursor.position++));
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
