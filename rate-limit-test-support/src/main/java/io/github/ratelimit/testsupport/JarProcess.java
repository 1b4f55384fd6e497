package io.github.ratelimit.testsupport;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * A packaged application's jar in a JVM of its own, as a user runs it, with its output collected and the port its
 * web server (Tomcat or Netty) started on read from it.
 */
public final class JarProcess implements AutoCloseable {

	private static final Pattern PORT = Pattern.compile("(?:Tomcat|Netty) started on port (\\d+)");

	private final Process process;

	private final List<String> lines = new ArrayList<>();

	private final CompletableFuture<Integer> port = new CompletableFuture<>();

	private JarProcess(Process process) {
		this.process = process;
		Thread reader = new Thread(this::read, "jar-output");
		reader.setDaemon(true);
		reader.start();
	}

	/**
	 * Starts a jar, without waiting for it.
	 * @param jvmOptions options of the JVM, e.g. {@code -Dspring.aot.enabled=true}
	 * @param jar the jar
	 * @param arguments the application's arguments
	 * @return the process
	 * @throws IOException when it cannot be started
	 */
	public static JarProcess launch(List<String> jvmOptions, Path jar, String... arguments) throws IOException {
		List<String> command = new ArrayList<>();
		command.add(ProcessHandle.current().info().command().orElse("java"));
		command.addAll(jvmOptions);
		command.addAll(List.of("-jar", jar.toString(), "--spring.main.banner-mode=off"));
		command.addAll(List.of(arguments));
		return new JarProcess(new ProcessBuilder(command).redirectErrorStream(true).start());
	}

	/**
	 * Finds a jar in a directory.
	 * @param directory the directory, e.g. {@code target}
	 * @param name a regular expression of its file name
	 * @return the jar
	 * @throws IOException when the directory cannot be read
	 */
	public static Path jar(Path directory, String name) throws IOException {
		try (Stream<Path> files = Files.list(directory)) {
			return files.filter((file) -> file.getFileName().toString().matches(name))
				.findFirst()
				.orElseThrow(() -> new IllegalStateException("No jar " + name + " in " + directory + ": run mvn verify"));
		}
	}

	/**
	 * Waits until its web server listens, at most two minutes.
	 * @return this process
	 * @throws Exception when it ended first, or took longer
	 */
	public JarProcess started() throws Exception {
		this.port.get(120, TimeUnit.SECONDS);
		return this;
	}

	/**
	 * Waits until it ends, at most two minutes.
	 * @return this process
	 * @throws InterruptedException when interrupted
	 */
	public JarProcess ended() throws InterruptedException {
		this.process.waitFor(120, TimeUnit.SECONDS);
		return this;
	}

	/**
	 * Returns the port its web server listens on.
	 * @return the port
	 */
	public int port() {
		return this.port.join();
	}

	/**
	 * Returns its exit code, once it ended.
	 * @return the code
	 */
	public int exitCode() {
		return this.process.exitValue();
	}

	/**
	 * Returns what it printed so far.
	 * @return its output
	 */
	public String output() {
		synchronized (this.lines) {
			return String.join("\n", this.lines);
		}
	}

	private void read() {
		try (BufferedReader reader = new BufferedReader(
				new InputStreamReader(this.process.getInputStream(), StandardCharsets.UTF_8))) {
			String line;
			while ((line = reader.readLine()) != null) {
				synchronized (this.lines) {
					this.lines.add(line);
				}
				Matcher matcher = PORT.matcher(line);
				if (matcher.find()) {
					this.port.complete(Integer.parseInt(matcher.group(1)));
				}
			}
		}
		catch (IOException ex) {
			// the process ended
		}
		this.port.completeExceptionally(new IllegalStateException("The application ended:\n" + output()));
	}

	@Override
	public void close() throws InterruptedException {
		this.process.destroy();
		if (!this.process.waitFor(30, TimeUnit.SECONDS)) {
			this.process.destroyForcibly();
		}
	}

}
