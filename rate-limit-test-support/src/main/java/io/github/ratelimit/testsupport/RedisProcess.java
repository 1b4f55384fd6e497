package io.github.ratelimit.testsupport;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * A real Redis server process for tests, on a free loopback port: {@code redis-server} from the PATH
 * when there is one, else the binary shipped in the {@code embedded-redis} dependency. Can be
 * killed with SIGKILL and started again on the same port.
 */
public final class RedisProcess implements AutoCloseable {

	/** {@code -Dredis.embedded=true} ignores the PATH: the embedded binary, no redis-cli. */
	private static final boolean EMBEDDED_ONLY = Boolean.getBoolean("redis.embedded");

	private static Path binary;

	private final int port;

	private final List<String> extraArgs;

	private final Path dir;

	private Process process;

	private RedisProcess(int port, List<String> extraArgs) {
		this.port = port;
		this.extraArgs = extraArgs;
		try {
			this.dir = Files.createTempDirectory("redis-" + port + "-");
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * Starts a server on a free port.
	 * @param extraArgs more {@code --name value} arguments, e.g. for cluster mode
	 * @return the running server
	 */
	public static RedisProcess launch(String... extraArgs) {
		List<String> args = List.of(extraArgs);
		int index = args.indexOf("--cluster-enabled");
		boolean cluster = index >= 0 && index + 1 < args.size() && "yes".equals(args.get(index + 1));
		for (int attempt = 1;; attempt++) {
			RedisProcess redis = new RedisProcess(cluster ? freePortWithBusPort() : freePort(), args);
			try {
				redis.start();
				return redis;
			}
			catch (IllegalStateException ex) {
				// Another JVM of the suite (tests run in two) took the free port first: try another.
				redis.close();
				// The message holds the server's log.
				if (attempt == 3 || !String.valueOf(ex.getMessage()).contains("Address already in use")) {
					throw ex;
				}
			}
		}
	}

	/**
	 * Returns the server's loopback port.
	 * @return the port
	 */
	public int port() {
		return this.port;
	}

	/**
	 * Starts (again) on this server's port.
	 */
	public synchronized void start() {
		List<String> command = new ArrayList<>(List.of(binary().toString(), "--port", Integer.toString(this.port),
				"--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", this.dir.toString(),
				"--daemonize", "no", "--loglevel", "warning"));
		command.addAll(this.extraArgs);
		if (isRunning()) {
			throw new IllegalStateException("Redis already runs on port " + this.port);
		}
		try {
			this.process = new ProcessBuilder(command).redirectErrorStream(true)
				.redirectOutput(this.dir.resolve("redis.log").toFile())
				.start();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot start " + command, ex);
		}
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
		// The server that answers must be this one: another JVM's may have taken the port first.
		while (!ping(this.port) || !answersAs(this.port, this.process.pid())) {
			if (!this.process.isAlive() || System.nanoTime() > deadline) {
				throw new IllegalStateException("Redis did not start on port " + this.port + ": " + log());
			}
			sleep(20);
		}
	}

	/**
	 * Says whether the process runs (it may still be paused or busy).
	 * @return {@code true} unless killed
	 */
	public synchronized boolean isRunning() {
		return this.process != null && this.process.isAlive();
	}

	/**
	 * Stops the server's process (SIGSTOP) until {@link #thaw()}: it keeps its connections, reads no command
	 * and answers none, however long a test takes; what is sent meanwhile runs once it is thawed. Unlike
	 * {@code CLIENT PAUSE}, whose end a loaded test cannot time, nothing is decided by the wall clock.
	 */
	public synchronized void freeze() {
		signal("STOP");
	}

	/**
	 * Resumes a {@linkplain #freeze() frozen} server (SIGCONT).
	 */
	public synchronized void thaw() {
		signal("CONT");
	}

	private void signal(String signal) {
		if (!isRunning()) {
			throw new IllegalStateException("Redis does not run on port " + this.port);
		}
		try {
			Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(this.process.pid())).inheritIO().start();
			if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
				throw new IllegalStateException("kill -" + signal + " failed for Redis on port " + this.port);
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * Kills the server with SIGKILL: no shutdown, sockets dropped.
	 */
	public synchronized void kill() {
		if (this.process != null) {
			this.process.destroyForcibly();
			try {
				this.process.waitFor(10, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			this.process = null;
		}
	}

	@Override
	public void close() {
		kill();
		try (var files = Files.walk(this.dir)) {
			files.sorted((a, b) -> b.compareTo(a)).map(Path::toFile).forEach(File::delete);
		}
		catch (IOException ex) {
			// a temporary directory left behind is harmless
		}
	}

	/**
	 * Returns what the server logged.
	 * @return its log, or {@code (no log)}
	 */
	public String log() {
		try {
			return Files.readString(this.dir.resolve("redis.log"));
		}
		catch (IOException ex) {
			return "(no log)";
		}
	}

	/**
	 * Finds a program on the PATH.
	 * @param name e.g. {@code redis-cli}
	 * @return its path, when there
	 */
	public static Optional<Path> onPath(String name) {
		String path = System.getenv("PATH");
		if (path == null || EMBEDDED_ONLY) {
			return Optional.empty();
		}
		return Arrays.stream(path.split(File.pathSeparator))
			.map((dir) -> Path.of(dir, name))
			.filter(Files::isExecutable)
			.findFirst();
	}

	/**
	 * Finds the {@code redis-server} to run: the PATH's, else embedded-redis's when on the class path.
	 * @return its path
	 * @throws IllegalStateException when there is neither
	 */
	public static synchronized Path binary() {
		if (binary == null) {
			binary = onPath("redis-server").orElseGet(RedisProcess::embeddedBinary);
		}
		return binary;
	}

	/**
	 * Returns the version of the server {@link #binary()} runs.
	 * @return e.g. {@code 7.0.15}, or {@code unknown}
	 */
	public static String version() {
		try {
			Process process = new ProcessBuilder(binary().toString(), "--version").redirectErrorStream(true).start();
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

	private static Path embeddedBinary() {
		String arch = System.getProperty("os.arch").toLowerCase(Locale.ROOT);
		String resource = (arch.contains("aarch64") || arch.contains("arm64")) ? "/redis-server-6.2.7-linux-arm64"
				: "/redis-server-6.2.6-v5-linux-amd64";
		try (InputStream in = RedisProcess.class.getResourceAsStream(resource)) {
			if (in == null) {
				throw new IllegalStateException("No redis-server on the PATH and no " + resource
						+ " in embedded-redis; install redis-server");
			}
			Path file = Files.createTempFile("redis-server-", "");
			Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
			file.toFile().setExecutable(true);
			file.toFile().deleteOnExit();
			return file;
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * Finds a free loopback port.
	 * @return the port
	 */
	public static int freePort() {
		try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * Finds a free loopback port whose cluster bus port (the port + 10000, which a cluster node also
	 * listens on) is free as well.
	 * @return the port
	 */
	static int freePortWithBusPort() {
		for (int attempt = 0; attempt < 100; attempt++) {
			int port = freePort();
			if (port + 10_000 <= 65_535 && isFree(port + 10_000)) {
				return port;
			}
		}
		throw new IllegalStateException("No free port with a free cluster bus port (port + 10000) found");
	}

	private static boolean isFree(int port) {
		try (ServerSocket socket = new ServerSocket(port, 1, java.net.InetAddress.getLoopbackAddress())) {
			return true;
		}
		catch (IOException ex) {
			return false;
		}
	}

	/**
	 * Says whether a Redis server answers {@code PING} on a loopback port.
	 * @param port the port
	 * @return {@code true} on {@code +PONG}
	 */
	public static boolean ping(int port) {
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
			socket.setSoTimeout(500);
			OutputStream out = socket.getOutputStream();
			out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
			out.flush();
			byte[] reply = new byte[7];
			int read = socket.getInputStream().read(reply);
			String answer = (read > 0) ? new String(reply, 0, read, StandardCharsets.US_ASCII) : "";
			// A server with requirepass answers NOAUTH: it is up.
			return answer.startsWith("+PONG") || answer.startsWith("-NOAUTH");
		}
		catch (IOException ex) {
			return false;
		}
	}

	/**
	 * Says whether the server on a loopback port is the process {@code pid} ({@code INFO server}); a server
	 * that wants a password cannot tell, and is taken as that process.
	 */
	private static boolean answersAs(int port, long pid) {
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
			socket.setSoTimeout(500);
			socket.getOutputStream().write("INFO server\r\n".getBytes(StandardCharsets.US_ASCII));
			socket.getOutputStream().flush();
			StringBuilder reply = new StringBuilder();
			byte[] buffer = new byte[4096];
			int read;
			while (reply.indexOf("process_id:") < 0 || reply.indexOf("\r\n", reply.indexOf("process_id:")) < 0) {
				if (reply.toString().startsWith("-") || (read = socket.getInputStream().read(buffer)) < 0) {
					return reply.toString().startsWith("-NOAUTH");
				}
				reply.append(new String(buffer, 0, read, StandardCharsets.US_ASCII));
			}
			int from = reply.indexOf("process_id:") + "process_id:".length();
			return Long.parseLong(reply.substring(from, reply.indexOf("\r\n", from)).trim()) == pid;
		}
		catch (IOException | NumberFormatException ex) {
			return false;
		}
	}

	/**
	 * Sleeps, for the waits on a real process that tests cannot avoid.
	 * @param millis how long
	 */
	public static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}
}
