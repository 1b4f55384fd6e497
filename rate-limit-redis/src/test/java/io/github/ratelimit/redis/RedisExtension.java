package io.github.ratelimit.redis;

import java.time.Duration;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.Delay;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.ratelimit.testsupport.RedisProcess;

/**
 * Starts one real Redis server per test class (register it as a static field with
 * {@code @RegisterExtension}) and stops it after the class; gives tests a Spring
 * {@link LettuceConnectionFactory} and Lettuce commands for looking inside.
 */
final class RedisExtension implements BeforeAllCallback, AfterAllCallback {

	private RedisProcess redis;

	private RedisClient client;

	private StatefulRedisConnection<String, String> connection;

	private StatefulRedisConnection<byte[], byte[]> binaryConnection;

	private LettuceConnectionFactory connectionFactory;

	@Override
	public void beforeAll(ExtensionContext context) {
		this.redis = RedisProcess.launch();
	}

	@Override
	public void afterAll(ExtensionContext context) {
		if (this.connectionFactory != null) {
			this.connectionFactory.destroy();
		}
		if (this.client != null) {
			this.client.shutdown();
		}
		this.redis.close();
	}

	int port() {
		return this.redis.port();
	}

	RedisProcess process() {
		return this.redis;
	}

	/**
	 * Returns a started connection factory on this server, shared by the class.
	 * @return the factory
	 */
	synchronized LettuceConnectionFactory connectionFactory() {
		if (this.connectionFactory == null) {
			this.connectionFactory = new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", port()));
			this.connectionFactory.afterPropertiesSet();
			this.connectionFactory.start();
		}
		return this.connectionFactory;
	}

	/**
	 * Creates a connection factory that reconnects every 50 ms after losing Redis (Lettuce's default
	 * backs off up to 30 s), for tests that stop and start the server. The caller destroys it.
	 * @return a started factory
	 */
	LettuceConnectionFactory newFastReconnectingFactory() {
		return fastReconnectingFactory(port());
	}

	static LettuceConnectionFactory fastReconnectingFactory(int port) {
		ClientResources resources = DefaultClientResources.builder()
			.reconnectDelay(Delay.constant(Duration.ofMillis(50)))
			.build();
		LettuceConnectionFactory factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", port),
				LettuceClientConfiguration.builder().clientResources(resources).build());
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

	/**
	 * Returns Lettuce commands on raw bytes, for DUMP.
	 * @return the commands
	 */
	synchronized RedisCommands<byte[], byte[]> binaryCommands() {
		if (this.binaryConnection == null || !this.binaryConnection.isOpen()) {
			commands();
			this.binaryConnection = this.client.connect(ByteArrayCodec.INSTANCE);
		}
		return this.binaryConnection.sync();
	}

	/**
	 * Returns Lettuce commands on this server, for tests to look at keys.
	 * @return the commands
	 */
	synchronized RedisCommands<String, String> commands() {
		if (this.connection == null || !this.connection.isOpen()) {
			if (this.client == null) {
				this.client = RedisClient.create("redis://127.0.0.1:" + port());
			}
			this.connection = this.client.connect();
		}
		return this.connection.sync();
	}
}
