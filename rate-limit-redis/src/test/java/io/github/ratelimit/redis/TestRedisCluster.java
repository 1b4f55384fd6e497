package io.github.ratelimit.redis;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;

import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.ratelimit.testsupport.RedisProcess;

/**
 * A real Redis Cluster for tests: three masters ({@code redis-server --cluster-enabled yes}) on free
 * ports, joined by {@code redis-cli --cluster create} when redis-cli is on the PATH, else by
 * {@code CLUSTER ADDSLOTS} and {@code CLUSTER MEET} sent directly (what redis-cli does). Not
 * thread-safe.
 */
public final class TestRedisCluster implements AutoCloseable {

	private static final int SLOTS = 16384;

	/** The cluster that tests which kill no node share, started by the first of them. */
	private static TestRedisCluster shared;

	private final List<RedisProcess> nodes = new ArrayList<>();

	/** The port of each slot's master, read once. */
	private int[] slotPorts;

	private TestRedisCluster() {
	}

	/**
	 * Returns the cluster of this JVM's tests that kill no node and change no setting, emptied: started at
	 * the first call (a cluster takes seconds to form), stopped when the JVM exits. Not to be closed.
	 * @return the cluster, with no key
	 */
	public static synchronized TestRedisCluster shared() {
		if (shared == null) {
			TestRedisCluster started = start();
			Runtime.getRuntime().addShutdownHook(new Thread(started::close, "test-redis-cluster-stop"));
			shared = started;
		}
		shared.nodes.forEach((node) -> on(node.port(), (commands) -> commands.flushall()));
		return shared;
	}

	/**
	 * Starts three masters and joins them into a cluster whose every slot is served.
	 * @return the cluster
	 */
	public static TestRedisCluster start() {
		return start(new String[0]);
	}

	/**
	 * Starts three masters with more settings and joins them into a cluster whose every slot is served.
	 * @param extraArgs {@code --name value} arguments for every node, e.g.
	 * {@code --cluster-require-full-coverage no}
	 * @return the cluster
	 */
	public static TestRedisCluster start(String... extraArgs) {
		TestRedisCluster cluster = new TestRedisCluster();
		try {
			for (int i = 0; i < 3; i++) {
				List<String> args = new ArrayList<>(List.of("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
						"--cluster-node-timeout", "5000"));
				args.addAll(List.of(extraArgs));
				cluster.nodes.add(RedisProcess.launch(args.toArray(String[]::new)));
			}
			Optional<Path> cli = RedisProcess.onPath("redis-cli");
			if (cli.isPresent()) {
				cluster.createWithRedisCli(cli.get());
			}
			else {
				cluster.createWithCommands();
			}
			cluster.awaitReady();
			return cluster;
		}
		catch (RuntimeException ex) {
			cluster.close();
			throw ex;
		}
	}

	/**
	 * Returns the nodes as Spring Boot's {@code spring.data.redis.cluster.nodes} wants them.
	 * @return e.g. {@code 127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002}
	 */
	public String nodes() {
		return this.nodes.stream().map((node) -> "127.0.0.1:" + node.port()).collect(Collectors.joining(","));
	}

	/**
	 * Opens a Lettuce connection factory on this cluster, started; the caller destroys it.
	 * @return the factory
	 */
	public LettuceConnectionFactory connectionFactory() {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisClusterConfiguration(Arrays.asList(nodes().split(","))));
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

	/**
	 * Returns the port of the master that serves a key.
	 * @param key a Redis key
	 * @return its master's port
	 */
	public int portOf(String key) {
		if (this.slotPorts == null) {
			this.slotPorts = slotPorts();
		}
		return this.slotPorts[io.lettuce.core.cluster.SlotHash.getSlot(key)];
	}

	/** The port of each slot's master, as a running node sees the cluster (no replicas: it never changes). */
	private int[] slotPorts() {
		int[] ports = new int[SLOTS];
		RedisProcess node = this.nodes.stream().filter(RedisProcess::isRunning).findFirst().orElseThrow();
		for (String line : on(node.port(), (commands) -> commands.clusterNodes()).split("\n")) {
			String[] fields = line.trim().split(" ");
			if (fields.length < 9 || !fields[2].contains("master")) {
				continue;
			}
			int port = Integer.parseInt(fields[1].substring(fields[1].indexOf(':') + 1, fields[1].indexOf('@')));
			for (int i = 8; i < fields.length; i++) {
				String[] range = fields[i].split("-");
				if (range[0].startsWith("[")) {
					continue;
				}
				java.util.Arrays.fill(ports, Integer.parseInt(range[0]), Integer.parseInt(range[range.length - 1]) + 1, port);
			}
		}
		return ports;
	}

	/**
	 * Kills one master with SIGKILL.
	 * @param port its port
	 */
	public void kill(int port) {
		this.nodes.stream().filter((node) -> node.port() == port).forEach(RedisProcess::kill);
	}

	/**
	 * Sets a configuration value on every running node.
	 * @param name e.g. {@code cluster-node-timeout}
	 * @param value its value
	 */
	public void configSet(String name, String value) {
		this.nodes.stream().filter(RedisProcess::isRunning).forEach((node) -> on(node.port(), (commands) -> commands.configSet(name, value)));
	}

	/**
	 * Returns {@code CLUSTER INFO} of the first running node.
	 * @return its text
	 */
	public String info() {
		RedisProcess node = this.nodes.stream().filter(RedisProcess::isRunning).findFirst().orElseThrow();
		return on(node.port(), (commands) -> commands.clusterInfo());
	}

	private void createWithRedisCli(Path cli) {
		List<String> command = new ArrayList<>(List.of(cli.toString(), "--cluster", "create"));
		this.nodes.forEach((node) -> command.add("127.0.0.1:" + node.port()));
		command.addAll(List.of("--cluster-replicas", "0", "--cluster-yes"));
		try {
			Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
			String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
			if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
				throw new IllegalStateException("redis-cli --cluster create failed: " + output);
			}
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	private void createWithCommands() {
		for (int i = 0; i < this.nodes.size(); i++) {
			int from = SLOTS * i / this.nodes.size();
			int to = SLOTS * (i + 1) / this.nodes.size();
			int[] slots = new int[to - from];
			for (int slot = from; slot < to; slot++) {
				slots[slot - from] = slot;
			}
			int port = this.nodes.get(i).port();
			on(port, (commands) -> commands.clusterAddSlots(slots));
		}
		int first = this.nodes.get(0).port();
		for (RedisProcess node : this.nodes.subList(1, this.nodes.size())) {
			on(first, (commands) -> commands.clusterMeet("127.0.0.1", node.port()));
		}
	}

	private void awaitReady() {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
		for (RedisProcess node : this.nodes) {
			while (!on(node.port(), (commands) -> commands.clusterInfo()).contains("cluster_state:ok")
					|| on(node.port(), (commands) -> commands.clusterNodes()).lines().count() < this.nodes.size()) {
				if (System.nanoTime() > deadline) {
					throw new IllegalStateException("The cluster did not become ready: "
							+ on(node.port(), (commands) -> commands.clusterInfo()));
				}
				RedisProcess.sleep(50);
			}
		}
	}

	private static <T> T on(int port, java.util.function.Function<RedisCommands<String, String>, T> action) {
		RedisClient client = RedisClient.create("redis://127.0.0.1:" + port);
		try (StatefulRedisConnection<String, String> connection = client.connect()) {
			return action.apply(connection.sync());
		}
		finally {
			client.shutdown();
		}
	}

	@Override
	public void close() {
		this.nodes.forEach(RedisProcess::close);
	}
}
