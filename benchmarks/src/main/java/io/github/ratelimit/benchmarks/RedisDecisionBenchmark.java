package io.github.ratelimit.benchmarks;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.ConsumptionProbe;
import io.github.bucket4j.distributed.BucketProxy;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.redis.lettuce.Bucket4jLettuce;
import io.github.bucket4j.redis.lettuce.cas.LettuceBasedProxyManager;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
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
 * filter calls it (one {@link Acquisition} per request, the Redis key built per call);</li>
 * <li>{@link #bucket4j}: Bucket4j's Lettuce compare-and-swap proxy manager (8.19.0), one prebuilt
 * {@link BucketProxy} per key, {@code tryConsumeAndReturnRemaining(1)}, keys expiring when refilled;</li>
 * <li>{@link #raw}: the ceiling: Lettuce's synchronous {@code EVALSHA} of a minimal GCRA script (the same
 * arithmetic as ours, the server's {@code TIME}, {@code GET} and {@code SET ... PX}), keys and arguments
 * prebuilt, the reply one integer.</li>
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

	static final String LIMIT_ID = "redis-bench";

	static final long LIMIT = 1000;

	static final Duration PERIOD = Duration.ofHours(1);

	/** The ceiling's script: GCRA in integer microseconds, as our token bucket, without the extras. */
	static final String RAW_SCRIPT = """
			local t = redis.call('TIME')
			local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
			local interval = tonumber(ARGV[1])
			local tat = tonumber(redis.call('GET', KEYS[1])) or now
			if tat < now then tat = now end
			local new_tat = tat + interval
			if new_tat - now > tonumber(ARGV[2]) then return 0 end
			redis.call('SET', KEYS[1], string.format('%.0f', new_tat), 'PX', math.ceil((new_tat - now) / 1000) + 1)
			return 1
			""";

	@Param({ "100000" })
	public int keys;

	private Keys keySet;

	private LettuceConnectionFactory connectionFactory;

	private RedisRateLimitStore ours;

	private Limit limit;

	private RedisClient client;

	private StatefulRedisConnection<byte[], byte[]> connection;

	private BucketProxy[] buckets;

	private RedisCommands<byte[], byte[]> commands;

	private byte[][][] rawKeys;

	private byte[][] rawArgs;

	private String rawSha;

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
			case "ours" -> {
				this.connectionFactory = new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", port));
				this.connectionFactory.afterPropertiesSet();
				this.connectionFactory.start();
				// A generous timeout: a decision Redis did not answer in time would be a (fast) fallback; the
				// tear-down fails the benchmark when there was any.
				this.ours = RedisRateLimitStore.builder(this.connectionFactory).timeout(Duration.ofSeconds(5)).build();
			}
			case "bucket4j" -> {
				LettuceBasedProxyManager<byte[]> proxyManager = Bucket4jLettuce.casBasedBuilder(this.connection)
					.expirationAfterWrite(ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(Duration.ZERO))
					.build();
				BucketConfiguration configuration = BucketConfiguration.builder()
					.addLimit(Bandwidth.builder().capacity(LIMIT).refillGreedy(LIMIT, PERIOD).build())
					.build();
				this.buckets = new BucketProxy[this.keys];
				for (int i = 0; i < this.keys; i++) {
					this.buckets[i] = proxyManager.builder().build(redisKey(i), () -> configuration);
				}
			}
			case "raw" -> {
				this.commands = this.connection.sync();
				this.rawSha = this.commands.scriptLoad(RAW_SCRIPT.getBytes(StandardCharsets.UTF_8));
				this.rawKeys = new byte[this.keys][][];
				for (int i = 0; i < this.keys; i++) {
					this.rawKeys[i] = new byte[][] { redisKey(i) };
				}
				this.rawArgs = new byte[][] { bytes(this.limit.emissionIntervalNanos() / 1000),
						bytes(this.limit.emissionIntervalNanos() / 1000 * LIMIT) };
			}
			default -> throw new IllegalArgumentException("No implementation for benchmark method " + method);
		}
	}

	@TearDown(Level.Trial)
	public void tearDown() {
		try {
			if (this.ours != null) {
				long fallbacks = this.ours.fallbacks();
				this.ours.close();
				if (fallbacks > 0) {
					throw new IllegalStateException(fallbacks + " decisions of ours were fallbacks, not Redis' answers ("
							+ this.ours.errors() + " errors): the figure would be wrong");
				}
			}
		}
		finally {
			if (this.connectionFactory != null) {
				this.connectionFactory.destroy();
			}
			this.connection.close();
			this.client.shutdown();
		}
	}

	/** The same key as our store writes, for the peers too, so that Redis sees keys of one length. */
	private byte[] redisKey(int index) {
		return ("rate-limit:{" + LIMIT_ID + ":" + this.keySet.get(index) + "}").getBytes(StandardCharsets.UTF_8);
	}

	private static byte[] bytes(long value) {
		return Long.toString(value).getBytes(StandardCharsets.US_ASCII);
	}

	/** Our Redis store, exactly as the filter calls it. */
	@Benchmark
	public Decision ours(Cursor cursor) {
		return this.ours.tryAcquire(new Acquisition(LIMIT_ID, this.limit, this.keySet.request(this.keySet.indexAt(cursor.position++)), 1));
	}

	/** Peer: Bucket4j's Lettuce compare-and-swap proxy manager. */
	@Benchmark
	public ConsumptionProbe bucket4j(Cursor cursor) {
		return this.buckets[this.keySet.indexAt(cursor.position++)].tryConsumeAndReturnRemaining(1);
	}

	/** Ceiling: a raw Lettuce {@code EVALSHA} loop of a minimal GCRA script. */
	@Benchmark
	public Long raw(Cursor cursor) {
		return this.commands.evalsha(this.rawSha, ScriptOutputType.INTEGER, this.rawKeys[this.keySet.indexAt(cursor.position++)],
				this.rawArgs);
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
