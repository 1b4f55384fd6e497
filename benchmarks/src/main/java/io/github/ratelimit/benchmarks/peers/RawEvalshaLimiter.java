package io.github.ratelimit.benchmarks.peers;

import java.nio.charset.StandardCharsets;
import java.util.List;

import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;

/**
 * The ceiling on Redis: Lettuce's synchronous {@code EVALSHA} of a minimal GCRA script (the same
 * arithmetic as our token bucket, the server's {@code TIME}, {@code GET} and {@code SET ... PX}), keys and
 * arguments prebuilt, the reply one integer. No production limiter does less per decision. Thread-safe,
 * on a connection the caller owns.
 */
public final class RawEvalshaLimiter {

	/** GCRA in integer microseconds, as our token bucket, without the extras. */
	static final String SCRIPT = """
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

	private final RedisCommands<byte[], byte[]> commands;

	private final String sha;

	private final byte[][][] keys;

	private final byte[][] args;

	/**
	 * Loads the script and prebuilds the keys and arguments.
	 * @param connection the shared Lettuce connection
	 * @param keys the Redis keys, in index order
	 * @param intervalMicros the emission interval: one request's share of the period
	 * @param burstMicros how far ahead of now the theoretical arrival time may run
	 */
	public RawEvalshaLimiter(StatefulRedisConnection<byte[], byte[]> connection, List<byte[]> keys, long intervalMicros,
			long burstMicros) {
		this.commands = connection.sync();
		this.sha = this.commands.scriptLoad(SCRIPT.getBytes(StandardCharsets.UTF_8));
		this.keys = new byte[keys.size()][][];
		for (int i = 0; i < keys.size(); i++) {
			this.keys[i] = new byte[][] { keys.get(i) };
		}
		this.args = new byte[][] { bytes(intervalMicros), bytes(burstMicros) };
	}

	/**
	 * Decides one request of cost 1.
	 * @param index the key's index
	 * @return 1 when allowed, 0 when not
	 */
	public Long tryAcquire(int index) {
		return this.commands.evalsha(this.sha, ScriptOutputType.INTEGER, this.keys[index], this.args);
	}

	private static byte[] bytes(long value) {
		return Long.toString(value).getBytes(StandardCharsets.US_ASCII);
	}
}
