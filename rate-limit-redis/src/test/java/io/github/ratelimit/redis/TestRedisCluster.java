package io.github.ratelimit.redis;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;

import io.github.ratelimit.testsupport.RedisProcess;

/**
 * A real Redis Cluster for tests: three masters ({@code redis-server --cluster-enabled yes}) on free
 * ports, joined by {@code redis-cli --cluster create} when redis-cli is on the PATH, else by
 * {@code CLUSTER ADDSLOTS} and {@code CLUSTER MEET} sent directly (what redis-cli does). Not
 * thread-safe.
 */
public final class TestRedisCluster implements AutoCloseable {

	private static final int SLOTS = 16384;

	private final List<RedisProcess> nodes = new ArrayList<>();

	private TestRedisCluster() {
	}

	/**
	 * Starts three masters and joins them into a cluster whose every slot is served.
	 * @return the cluster
	 */
	public static TestRedisCluster start() {
		TestRedisCluster cluster = new TestRedisCluster();
		try {
			for (int i = 0; i < 3; i++) {
				cluster.nodes.add(RedisProcess.launch("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
						"--cluster-node-timeout", "5000"));
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
