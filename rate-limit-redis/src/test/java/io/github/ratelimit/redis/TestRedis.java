package io.github.ratelimit.redis;

import java.util.List;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;

import io.github.ratelimit.testsupport.RedisProcess;

/**
 * A real Redis server for tests in other packages: start, SIGKILL, restart on the same port, look at
 * its keys. Not thread-safe.
 */
public final class TestRedis implements AutoCloseable {

	private final RedisProcess process;

	private TestRedis(RedisProcess process) {
		this.process = process;
	}

	/**
	 * Starts a standalone server on a free port.
	 * @return the server
	 */
	public static TestRedis start() {
		return new TestRedis(RedisProcess.launch());
	}

	/**
	 * Starts a standalone server on a free port with more settings.
	 * @param extraArgs {@code --name value} arguments, e.g. {@code --requirepass secret}
	 * @return the server
	 */
	public static TestRedis start(String... extraArgs) {
		return new TestRedis(RedisProcess.launch(extraArgs));
	}

	public int port() {
		return this.process.port();
	}

	public boolean isRunning() {
		return this.process.isRunning();
	}

	/** Kills the server with SIGKILL. */
	public void kill() {
		this.process.kill();
	}

	/** Stops the server's process until {@link #thaw()}: it answers nothing meanwhile. */
	public void freeze() {
		this.process.freeze();
	}

	/** Resumes a frozen server. */
	public void thaw() {
		this.process.thaw();
	}

	/** Starts the server again on its port, empty. */
	public void restart() {
		this.process.start();
	}

	public void flushAll() {
		run((connection) -> connection.sync().flushall());
	}

	/**
	 * Returns how many times each command ran since the last {@link #resetStats()}, from
	 * {@code INFO commandstats} (commands that scripts call count too).
	 * @return calls by lower-case command name, e.g. {@code evalsha}
	 */
	public java.util.Map<String, Long> commandCalls() {
		String info = run((connection) -> connection.sync().info("commandstats"));
		java.util.Map<String, Long> calls = new java.util.TreeMap<>();
		for (String line : info.split("\r?\n")) {
			if (line.startsWith("cmdstat_")) {
				String name = line.substring("cmdstat_".length(), line.indexOf(':'));
				String stats = line.substring(line.indexOf(':') + 1);
				for (String stat : stats.split(",")) {
					if (stat.startsWith("calls=")) {
						calls.put(name, Long.parseLong(stat.substring("calls=".length())));
					}
				}
			}
		}
		return calls;
	}

	/** Zeroes the command statistics ({@code CONFIG RESETSTAT}). */
	public void resetStats() {
		run((connection) -> connection.sync().configResetstat());
	}

	public List<String> keys() {
		return run((connection) -> connection.sync().keys("*"));
	}

	@Override
	public void close() {
		this.process.close();
	}

	private <T> T run(java.util.function.Function<StatefulRedisConnection<String, String>, T> action) {
		RedisClient client = RedisClient.create("redis://127.0.0.1:" + port());
		try (StatefulRedisConnection<String, String> connection = client.connect()) {
			return action.apply(connection);
		}
		finally {
			client.shutdown();
		}
	}
}
