package io.github.ratelimit.redis;

import java.util.ArrayList;
import java.util.List;

import org.springframework.data.redis.connection.RedisClusterConnection;
import org.springframework.data.redis.connection.RedisClusterNode;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.Cursor;
import org.springframework.data.redis.core.ScanOptions;

/**
 * Deletes every key that matches a pattern, for tests: {@code SCAN} with {@code MATCH} (never
 * {@code KEYS}, which blocks the server), then {@code UNLINK} (the memory is freed off the main thread).
 * On Redis Cluster, each master is scanned on its own, and each key is unlinked alone (the keys of one
 * batch would sit in different slots). Not atomic: a key written during the scan may stay. Stateless.
 */
final class NamespaceReset {

	private static final int BATCH = 500;

	private NamespaceReset() {
	}

	/**
	 * Deletes the keys.
	 * @param factory the connections
	 * @param pattern a {@code SCAN MATCH} pattern
	 */
	static void unlinkAll(RedisConnectionFactory factory, byte[] pattern) {
		ScanOptions options = ScanOptions.scanOptions().match(pattern).count(BATCH).build();
		try (RedisConnection connection = factory.getConnection()) {
			if (connection instanceof RedisClusterConnection cluster) {
				for (RedisClusterNode node : cluster.clusterGetNodes()) {
					if (node.isMaster()) {
						try (Cursor<byte[]> keys = cluster.scan(node, options)) {
							keys.forEachRemaining(cluster.keyCommands()::unlink);
						}
					}
				}
				return;
			}
			try (Cursor<byte[]> keys = connection.keyCommands().scan(options)) {
				List<byte[]> batch = new ArrayList<>(BATCH);
				while (keys.hasNext()) {
					batch.add(keys.next());
					if (batch.size() == BATCH || !keys.hasNext()) {
						connection.keyCommands().unlink(batch.toArray(byte[][]::new));
						batch.clear();
					}
				}
			}
		}
	}
}
