package io.github.ratelimit.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Function;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.ReturnType;

/**
 * The runtime changes of policies, kept in Redis for every instance: a hash {@code <prefix>{overrides}}
 * (policy name to its values) and a counter {@code <prefix>{overrides}:version}, one hash tag, so both
 * sit in one slot of a cluster and one script writes both. Neither has a TTL: they hold what operators
 * set, and are small. Every write of the hash increments the counter, and so does a reset of a key;
 * each instance polls the counter (one {@code GET}) every {@code pollInterval}, and when it moved,
 * reads the hash, hands it to the listener and forgets the rejections it keeps (tokens may have come
 * back). Redis calls run on two daemon threads of their own (one polls, one writes), so a slow Redis
 * never holds a request; callers wait a bounded time; a third, which never calls Redis, watches the polls.
 * An outage of the polls is logged once (WARN), its recovery once (INFO): after {@value #FAILURES_LOGGED}
 * failed polls in a row, or as soon as no poll has been answered for that many intervals and
 * {@link #WAIT} (a poll that waits for the client's command timeout, 60 s unless
 * {@code spring.data.redis.timeout} says otherwise, fails late: the watching thread notices, within about
 * one more interval); meanwhile the last values stay in force. Thread-safe.
 */
final class RedisOverrides implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(RedisOverrides.class);

	/** How long a write (or the first read at start-up) is waited for. */
	static final Duration WAIT = Duration.ofSeconds(2);

	/** Polls failed in a row before the WARN: one slow answer on a loaded machine is no outage. */
	private static final int FAILURES_LOGGED = 3;

	private static final byte[] WRITE = ("if ARGV[2] == '' then redis.call('HDEL', KEYS[1], ARGV[1]) "
			+ "else redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) end return redis.call('INCR', KEYS[2])")
		.getBytes(StandardCharsets.UTF_8);

	private final RedisConnectionFactory factory;

	private final byte[] hashKey;

	private final byte[] versionKey;

	private final long pollIntervalNanos;

	private final Runnable onChange;

	private final ScheduledExecutorService poller;

	private final ScheduledExecutorService writer;

	/** Watches the polls ({@link #checkAnswered}); never calls Redis, so no slow call holds it. */
	private final ScheduledExecutorService watcher;

	/** Polls failed in a row; logged when it reaches {@link #FAILURES_LOGGED}. Poll thread only. */
	private int failures;

	/** When a poll was last answered ({@link System#nanoTime()}; creation before the first). */
	private volatile long answeredAt = System.nanoTime();

	/** Whether the outage of the polls has been logged (and its end is still to be). */
	private final AtomicBoolean down = new AtomicBoolean();

	private final AtomicBoolean started = new AtomicBoolean();

	/** The counter last read; {@code null} until a read succeeds. Poll thread only (and start-up, before polls). */
	private volatile @Nullable Long version;

	/** The version this instance's latest write made: no snapshot older than it is applied. */
	private final AtomicLong written = new AtomicLong(Long.MIN_VALUE);

	private volatile @Nullable Consumer<Map<String, String>> listener;

	/** The counter read with the hash the listener is being given; {@link Long#MAX_VALUE} between deliveries. */
	private volatile long delivering = Long.MAX_VALUE;

	/**
	 * @param factory the application's connections
	 * @param keyPrefix the store's key prefix
	 * @param pollInterval how often the counter is read
	 * @param onChange run when the counter moved (before the listener): drops cached rejections
	 */
	RedisOverrides(RedisConnectionFactory factory, String keyPrefix, Duration pollInterval, Runnable onChange) {
		this.factory = factory;
		this.hashKey = (keyPrefix + "{overrides}").getBytes(StandardCharsets.UTF_8);
		this.versionKey = (keyPrefix + "{overrides}:version").getBytes(StandardCharsets.UTF_8);
		this.pollIntervalNanos = pollInterval.toNanos();
		this.onChange = onChange;
		this.poller = Executors.newSingleThreadScheduledExecutor((runnable) -> ScriptRunner.daemon(runnable, "rate-limit-redis-overrides"));
		this.writer = Executors
			.newSingleThreadScheduledExecutor((runnable) -> ScriptRunner.daemon(runnable, "rate-limit-redis-overrides-write"));
		this.watcher = Executors
			.newSingleThreadScheduledExecutor((runnable) -> ScriptRunner.daemon(runnable, "rate-limit-redis-overrides-watch"));
	}

	String hashKey() {
		return new String(this.hashKey, StandardCharsets.UTF_8);
	}

	String versionKey() {
		return new String(this.versionKey, StandardCharsets.UTF_8);
	}

	/**
	 * Writes (or, for {@code null}, removes) one policy's values and moves the counter, in one script.
	 * @throws IllegalStateException when Redis did not confirm within {@link #WAIT}
	 */
	void store(String policy, @Nullable String value) {
		byte[] field = policy.getBytes(StandardCharsets.UTF_8);
		byte[] bytes = (value != null) ? value.getBytes(StandardCharsets.UTF_8) : new byte[0];
		Object version;
		try {
			version = write("store the change of policy '" + policy + "' in Redis (" + hashKey() + ")",
					(connection) -> connection.scriptingCommands()
						.eval(WRITE, ReturnType.INTEGER, 2, this.hashKey, this.versionKey, field, bytes));
		}
		catch (RejectedExecutionException ex) {
			throw new IllegalStateException("The Redis store is closed: cannot store the change of policy '" + policy + "'");
		}
		if (version instanceof Long written) {
			// A poll that read the hash before this write must not put the policy back as it was.
			this.written.accumulateAndGet(written, Math::max);
		}
		// Read at once: the instance that wrote need not wait for its poll.
		try {
			this.poller.execute(this::poll);
		}
		catch (RejectedExecutionException ex) {
			// closed: no more polls
		}
	}

	/**
	 * Moves the counter, so every instance forgets the rejections it keeps (after a reset of a key).
	 * Waits at most {@link #WAIT}; a failure is logged, not thrown (the reset itself was done).
	 */
	void touch() {
		try {
			write("tell the other instances of a reset (" + versionKey() + ")",
					(connection) -> connection.stringCommands().incr(this.versionKey));
		}
		catch (IllegalStateException | RejectedExecutionException ex) {
			logger.warn(ex.getMessage() + "; other instances may keep a rejection of the key until it expires");
		}
	}

	/**
	 * Reads the overrides now (waiting at most {@link #WAIT}) and hands them to the listener, then polls
	 * every interval. Called once.
	 */
	void listen(Consumer<Map<String, String>> listener) {
		this.listener = listener;
		if (!this.started.compareAndSet(false, true)) {
			return;
		}
		try {
			CompletableFuture.runAsync(this::poll, this.poller).get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (TimeoutException | ExecutionException | RejectedExecutionException ex) {
			// Logged by the poll; later polls bring the overrides when Redis answers.
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		try {
			this.poller.scheduleWithFixedDelay(this::poll, this.pollIntervalNanos, this.pollIntervalNanos,
					TimeUnit.NANOSECONDS);
			this.watcher.scheduleWithFixedDelay(this::checkAnswered, this.pollIntervalNanos, this.pollIntervalNanos,
					TimeUnit.NANOSECONDS);
		}
		catch (RejectedExecutionException ex) {
			// closed
		}
	}

	/** One poll: the counter, and the hash when the counter moved. Poll thread only; never throws. */
	private void poll() {
		Consumer<Map<String, String>> to = this.listener;
		try {
			Map<String, String> overrides = null;
			Long seen;
			try (RedisConnection connection = this.factory.getConnection()) {
				byte[] raw = connection.stringCommands().get(this.versionKey);
				seen = (raw != null) ? Long.parseLong(new String(raw, StandardCharsets.US_ASCII)) : 0L;
				if (!seen.equals(this.version)) {
					overrides = new LinkedHashMap<>();
					Map<byte[], byte[]> all = connection.hashCommands().hGetAll(this.hashKey);
					if (all != null) {
						for (Map.Entry<byte[], byte[]> entry : all.entrySet()) {
							overrides.put(new String(entry.getKey(), StandardCharsets.UTF_8),
									new String(entry.getValue(), StandardCharsets.UTF_8));
						}
					}
				}
			}
			this.answeredAt = System.nanoTime();
			this.failures = 0;
			if (this.down.compareAndSet(true, false)) {
				logger.info("Rate limit overrides are read from Redis again (" + hashKey() + ")");
			}
			if (overrides != null && seen < this.written.get()) {
				// Read before this instance's own write landed: the next poll reads it.
				overrides = null;
			}
			if (overrides != null) {
				boolean first = this.version == null;
				this.version = seen;
				if (!first) {
					this.onChange.run();
				}
				if (to != null) {
					this.delivering = seen;
					try {
						to.accept(overrides);
					}
					finally {
						this.delivering = Long.MAX_VALUE;
					}
				}
			}
		}
		catch (RuntimeException ex) {
			if (++this.failures >= FAILURES_LOGGED) {
				warnDown(ex.getMessage());
			}
		}
	}

	/**
	 * Whether the hash the listener is being given was read after this instance's last write: asked by the
	 * listener under its lock, which a write's caller holds until the write landed (a check before the delivery
	 * would let a write slip in between).
	 */
	boolean isCurrent() {
		return this.delivering >= this.written.get();
	}

	/** On the watching thread: notices polls that wait for an answer (see the class description). */
	private void checkAnswered() {
		long silent = System.nanoTime() - this.answeredAt;
		if (silent > FAILURES_LOGGED * this.pollIntervalNanos + WAIT.toNanos()) {
			warnDown("no answer for " + TimeUnit.NANOSECONDS.toSeconds(silent) + " s");
		}
	}

	private void warnDown(@Nullable String reason) {
		if (this.down.compareAndSet(false, true)) {
			logger.warn("Cannot read the rate limit overrides from Redis (" + hashKey() + ": " + reason
					+ "); the policies keep their last known values and changes made on other instances are "
					+ "applied here when Redis answers again");
		}
	}

	/**
	 * Runs a command on the writing thread and waits for it at most {@link #WAIT}.
	 * @return the command's reply
	 * @throws IllegalStateException when Redis failed or did not answer in time
	 * @throws RejectedExecutionException when the store is closed
	 */
	private @Nullable Object write(String what, Function<RedisConnection, @Nullable Object> command) {
		CompletableFuture<@Nullable Object> call = CompletableFuture.supplyAsync(() -> {
			try (RedisConnection connection = this.factory.getConnection()) {
				return command.apply(connection);
			}
		}, this.writer);
		try {
			return call.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (TimeoutException ex) {
			throw new IllegalStateException("Redis did not answer within " + WAIT.toSeconds() + " s to " + what
					+ " (the write may still land)");
		}
		catch (ExecutionException ex) {
			Throwable cause = (ex.getCause() != null) ? ex.getCause() : ex;
			throw new IllegalStateException("Redis failed to " + what + ": " + cause.getMessage(), cause);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while waiting for Redis to " + what, ex);
		}
	}

	@Override
	public void close() {
		this.poller.shutdownNow();
		this.writer.shutdownNow();
		this.watcher.shutdownNow();
	}
}
