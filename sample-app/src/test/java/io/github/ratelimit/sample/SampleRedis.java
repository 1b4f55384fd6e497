package io.github.ratelimit.sample;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real {@code redis-server} (from the PATH) on a free loopback port, for the sample's Redis profile
 * test; stopped by {@link #close()}. Not thread-safe.
 */
final class SampleRedis implements AutoCloseable {

	private final int port;

	private final Process process;

	private SampleRedis(int port, Process process) {
		this.port = port;
		this.process = process;
	}

	static SampleRedis start() throws IOException {
		int port;
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			port = socket.getLocalPort();
		}
		Path dir = Files.createTempDirectory("sample-redis-");
		Process process = new ProcessBuilder(List.of("redis-server", "--port", Integer.toString(port), "--bind",
				"127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir.toString(), "--loglevel", "warning"))
			.redirectErrorStream(true)
			.redirectOutput(dir.resolve("redis.log").toFile())
			.start();
		SampleRedis redis = new SampleRedis(port, process);
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
		while (!redis.command("PING").startsWith("+PONG")) {
			if (!process.isAlive() || System.nanoTime() > deadline) {
				redis.close();
				throw new IllegalStateException("redis-server did not start: " + Files.readString(dir.resolve("redis.log")));
			}
			sleep();
		}
		return redis;
	}

	int port() {
		return this.port;
	}

	/**
	 * Sends one inline command.
	 * @param command e.g. {@code KEYS *}
	 * @return the start of the raw reply, or empty when Redis cannot be reached
	 */
	String command(String command) {
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress("127.0.0.1", this.port), 200);
			socket.setSoTimeout(1000);
			socket.getOutputStream().write((command + "\r\n").getBytes(StandardCharsets.US_ASCII));
			byte[] reply = new byte[4096];
			int read = socket.getInputStream().read(reply);
			return (read > 0) ? new String(reply, 0, read, StandardCharsets.UTF_8) : "";
		}
		catch (IOException ex) {
			return "";
		}
	}

	@Override
	public void close() {
		this.process.destroyForcibly();
		try {
			this.process.waitFor(10, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private static void sleep() {
		try {
			Thread.sleep(20);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new UncheckedIOException(new IOException(ex));
		}
	}
}
