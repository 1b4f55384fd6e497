package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.function.LongSupplier;

import org.jspecify.annotations.Nullable;

/**
 * The time the scripts read, chosen once per store: Redis' {@code TIME} (an empty first argument), from
 * whose replies each node's clock offset is learned for deadlines ({@link ServerClock}); or a test's clock,
 * sent as the first argument, under which no deadline is sent, nothing is learned and no rejection is kept
 * in process (a test's clock jumps; the rejection cache counts real time). Thread-safe.
 */
final class ScriptClock {

	static final ScriptClock SERVER = new ScriptClock(null);

	private static final byte[] SERVER_TIME = new byte[0];

	private final @Nullable LongSupplier testMicros;

	/**
	 * Creates a clock.
	 * @param testMicros a test's epoch microseconds, or {@code null} for Redis' {@code TIME}
	 */
	ScriptClock(@Nullable LongSupplier testMicros) {
		this.testMicros = testMicros;
	}

	/** The scripts' first argument: {@code ''} for the server's time, else the test's. */
	byte[] arg() {
		return (this.testMicros != null) ? ScriptCodec.number(this.testMicros.getAsLong()) : SERVER_TIME;
	}

	/** A give-up time as a deadline in the node's time, {@link ServerClock#NONE} when not known (or a test's). */
	long deadline(RedisNode node, long giveUpNanos) {
		return (this.testMicros == null) ? node.clock().deadlineMicros(giveUpNanos) : ServerClock.NONE;
	}

	/** Learns the node's clock from a reply (see {@link ServerClock#record}). */
	void learn(RedisNode node, long sentNanos, ReplyPart reply) {
		if (this.testMicros == null) {
			node.clock().record(sentNanos, System.nanoTime(), reply.serverTime());
		}
	}

	/** How long a rejection may be kept: none under a test's clock. */
	long rejectionCacheNanos(Duration maxAge) {
		return (this.testMicros == null) ? maxAge.toNanos() : 0;
	}
}
