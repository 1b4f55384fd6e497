package io.github.ratelimit.benchmarks.harness;

import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * A {@code redis-server} process of the run's own, on a free loopback port, without persistence; stopped
 * (and its directory deleted) on {@link #close()}. Found on the {@code PATH} (or at
 * {@code /usr/bin/redis-server}).
 */
public final class RedisServer implements AutoCloseable {

	private final int port;

	private final Path dir;

	private final Process process;

	private RedisServer(int port, Path dir, Process process) {
		this.port = port;
		this.dir = dir;
		this.process = process;
	}

	/**
	 * Finds {@code redis-server}.
	 * @return its path, when installed
	 */
	public static Optional<Path> binary() {
		String path = System.getenv("PATH");
		Optional<Path> found = (path == null) ? Optional.empty()
				: Arrays.stream(path.split(File.pathSeparator))
					.map((dir) -> Path.of(dir, "redis-server"))
					.filter(Files::isExecutable)
					.findFirst();
		return found.or(() -> Optional.of(Path.of("/usr/bin/redis-server")).filter(Files::isExecutable));
	}

	/**
	 * Starts a server and waits until it answers {@code PING}.
	 * @return the running server
	 * @throws IOException when it cannot start
	 */
	public static RedisServer start() throws IOException {
		Path binary = binary().orElseThrow(() -> new IllegalStateException("redis-server is not installed"));
		int port = freePort();
		Path dir = Files.createTempDirectory("bench-redis-" + port + "-");
		List<String> command = List.of(binary.toString(), "--port", Integer.toString(port), "--bind", "127.0.0.1",
				"--save", "", "--appendonly", "no", "--dir", dir.toString(), "--daemonize", "no", "--loglevel",
				"warning");
		Process process = new ProcessBuilder(command).redirectErrorStream(true)
			.redirectOutput(dir.resolve("redis.log").toFile())
			.start();
		RedisServer server = new RedisServer(port, dir, process);
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
		while (!ping(port)) {
			if (!process.isAlive() || System.nanoTime() > deadline) {
				String log = Files.readString(dir.resolve("redis.log"));
				server.close();
				throw new IllegalStateException("redis-server did not start on port " + port + ": " + log);
			}
			try {
				Thread.sleep(20);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				server.close();
				throw new IllegalStateException(ex);
			}
		}
		return server;
	}

	public int port() {
		return this.port;
	}

	/**
	 * Returns the server's version.
	 * @return e.g. {@code 7.0.15}, or {@code unknown}
	 */
	public static String version() {
		try {
			Process process = new ProcessBuilder(binary().orElseThrow().toString(), "--version").redirectErrorStream(true)
				.start();
			String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
			process.waitFor(5, TimeUnit.SECONDS);
			int v = out.indexOf("v=");
			return (v >= 0) ? out.substring(v + 2).split("\\s")[0] : "unknown";
		}
		catch (IOException | RuntimeException ex) {
			return "unknown";
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return "unknown";
		}
	}

	@Override
	public void close() {
		this.process.destroy();
		try {
			if (!this.process.waitFor(10, TimeUnit.SECONDS)) {
				this.process.destroyForcibly();
				this.process.waitFor(10, TimeUnit.SECONDS);
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			this.process.destroyForcibly();
		}
		try (var files = Files.walk(this.dir)) {
			files.sorted((a, b) -> b.compareTo(a)).map(Path::toFile).forEach(File::delete);
		}
		catch (IOException ex) {
			// a temporary directory left behind is harmless
		}
	}

	private static int freePort() {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private static boolean ping(int port) {
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
			socket.setSoTimeout(500);
			OutputStream out = socket.getOutputStream();
			out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
			out.flush();
			byte[] reply = new byte[7];
			int read = socket.getInputStream().read(reply);
			return read > 0 && new String(reply, 0, read, StandardCharsets.US_ASCII).startsWith("+PONG");
		}
		catch (IOException ex) {
			return false;
		}
	}
}
