package io.github.ratelimit.benchmarks.harness;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.benchmarks.MemorySection;
import io.github.ratelimit.testsupport.Http;

/**
 * The sample app's executable jar running in its own JVM on a free loopback port. Closing it stops the
 * process.
 */
public final class SampleApp implements AutoCloseable {

	/** The sample app's heap: fixed, the same on both sides. */
	public static final List<String> JVM_ARGS = List.of("-Xms512m", "-Xmx512m");

	private final String name;

	private final Process process;

	private final int port;

	private final Path log;

	private SampleApp(String name, Process process, int port, Path log) {
		this.name = name;
		this.process = process;
		this.port = port;
		this.log = log;
	}

	/**
	 * Starts the app.
	 * @param jar the executable jar
	 * @param name names the log file
	 * @param logDirectory where the log goes
	 * @param arguments application arguments, e.g. {@code --rate-limit.enabled=false}
	 * @return the running app (not yet ready)
	 * @throws IOException when the process cannot start
	 */
	public static SampleApp start(Path jar, String name, Path logDirectory, List<String> arguments) throws IOException {
		int port = freePort();
		List<String> command = new ArrayList<>();
		command.add(MemorySection.javaExecutable());
		command.addAll(JVM_ARGS);
		command.addAll(List.of("-jar", jar.toString(), "--server.port=" + port, "--server.address=127.0.0.1"));
		command.addAll(arguments);
		Files.createDirectories(logDirectory);
		Path log = logDirectory.resolve("sample-app-" + name + ".log");
		Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
		return new SampleApp(name, process, port, log);
	}

	private static int freePort() throws IOException {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
	}

	/**
	 * Returns a URI of the app.
	 * @param path e.g. {@code /api/hello}
	 * @return the loopback URI
	 */
	public URI uri(String path) {
		return URI.create("http://127.0.0.1:" + this.port + path);
	}

	/**
	 * Waits until the app answers.
	 * @param timeout how long to wait at most
	 * @throws Exception when the app stops or does not answer in time (with its log)
	 */
	public void awaitReady(Duration timeout) throws Exception {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (System.nanoTime() < deadline) {
			if (!this.process.isAlive()) {
				throw new IllegalStateException("The sample app (" + this.name + ") stopped:\n" + logTail());
			}
			try {
				if (get("/api/ping").statusCode() == 200) {
					return;
				}
			}
			catch (IllegalStateException ex) {
				// Not listening yet.
			}
			Thread.sleep(200);
		}
		throw new IllegalStateException("The sample app (" + this.name + ") did not answer within " + timeout + ":\n"
				+ logTail());
	}

	/**
	 * Sends one GET.
	 * @param path e.g. {@code /api/hello}
	 * @return the response
	 * @throws IllegalStateException when it cannot connect
	 */
	public HttpResponse<String> get(String path) {
		return new Http(this.port).get(path);
	}

	/**
	 * Returns the CPU time the app's process has used so far (all its threads: request threads, JIT
	 * compilers, GC), as the operating system counts it.
	 * @return nanoseconds, or {@code -1} when the platform does not tell
	 */
	public long cpuNanos() {
		return this.process.toHandle().info().totalCpuDuration().map(Duration::toNanos).orElse(-1L);
	}

	/**
	 * Returns the CPU time the app's JIT compiler threads have used so far: while it grows, the app is still
	 * compiling its request path.
	 * @return nanoseconds (in steps of the kernel's 10 ms clock tick), or {@code -1} when the platform does
	 * not tell
	 */
	public long compilerCpuNanos() {
		long ticks = CpuMeter.compilerTicks(this.process.pid());
		// /proc counts in USER_HZ ticks, 100 a second on every Linux architecture the JDK runs on.
		return (ticks < 0) ? -1 : ticks * 10_000_000L;
	}

	private String logTail() throws IOException {
		List<String> lines = Files.readAllLines(this.log, StandardCharsets.UTF_8);
		return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
	}

	@Override
	public void close() throws InterruptedException {
		this.process.destroy();
		if (!this.process.waitFor(15, TimeUnit.SECONDS)) {
			this.process.destroyForcibly();
			this.process.waitFor(5, TimeUnit.SECONDS);
		}
	}
}
