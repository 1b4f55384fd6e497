package io.github.ratelimit.sample;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
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

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Starts the packaged sample as an AOT-processed application ({@code -Dspring.aot.enabled=true}), as a
 * user would, and calls it over HTTP. Runs after {@code process-aot} and {@code repackage} (failsafe), in
 * sample-app and in sample-reactive-app (from this module's test jar), each against its own jar.
 */
class SampleAotIT {

	private static final Pattern PORT = Pattern.compile("(?:Tomcat|Netty) started on port (\\d+)");

	private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	@Test
	void theAotProcessedSampleLimitsAndItsConditionsAreFixedAtBuildTime() throws Exception {
		// rate-limit.enabled=false at run time cannot remove beans that AOT fixed at build time.
		try (Sample sample = Sample.start("--rate-limit.enabled=false")) {
			assertThat(sample.output()).containsPattern("Starting AOT-processed (Reactive)?SampleApplication");
			for (int i = 1; i <= 5; i++) {
				assertThat(get(sample.port(), "/api/hello").statusCode()).isEqualTo(200);
			}
			HttpResponse<String> rejected = get(sample.port(), "/api/hello");
			assertThat(rejected.statusCode()).isEqualTo(429);
			assertThat(rejected.body()).contains("\"violated-policies\":[\"api\"]");
			assertThat(get(sample.port(), "/api/ping").statusCode()).isEqualTo(200);
		}
	}

	@Test
	void aTypoStillFailsTheStart() throws Exception {
		try (Sample sample = Sample.run("--rate-limit.policies.api.brust=3")) {
			assertThat(sample.exitCode()).isNotZero();
			assertThat(sample.output()).contains("Invalid rate limit configuration at rate-limit.policies.api.brust")
				.contains("Did you mean rate-limit.policies.api.burst?");
		}
	}

	private HttpResponse<String> get(int port, String path) throws IOException, InterruptedException {
		return this.client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).GET().build(),
				HttpResponse.BodyHandlers.ofString());
	}

	/** The sample's jar in its own JVM, with its output collected. */
	private static final class Sample implements AutoCloseable {

		private final Process process;

		private final List<String> lines = new ArrayList<>();

		private final CompletableFuture<Integer> port = new CompletableFuture<>();

		private Sample(Process process) {
			this.process = process;
			Thread reader = new Thread(this::read, "sample-output");
			reader.setDaemon(true);
			reader.start();
		}

		static Sample start(String... arguments) throws Exception {
			Sample sample = new Sample(launch(arguments));
			sample.port.get(120, TimeUnit.SECONDS);
			return sample;
		}

		static Sample run(String... arguments) throws Exception {
			Sample sample = new Sample(launch(arguments));
			sample.process.waitFor(120, TimeUnit.SECONDS);
			return sample;
		}

		private static Process launch(String... arguments) throws IOException {
			String java = ProcessHandle.current().info().command().orElse("java");
			List<String> command = new ArrayList<>(List.of(java, "-Dspring.aot.enabled=true", "-jar", jar().toString(),
					"--server.port=0", "--spring.main.banner-mode=off"));
			command.addAll(List.of(arguments));
			return new ProcessBuilder(command).redirectErrorStream(true).start();
		}

		private static Path jar() throws IOException {
			try (Stream<Path> files = Files.list(Path.of("target"))) {
				// The module's executable jar, not the test jar beside it (sample-reactive-app runs these checks too).
				return files.filter((file) -> file.getFileName().toString().matches("sample-(reactive-)?app-[0-9].*(?<!-tests)\\.jar"))
					.findFirst()
					.orElseThrow(() -> new IllegalStateException("No sample jar in target: run mvn verify"));
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
			this.port.completeExceptionally(new IllegalStateException("The sample ended:\n" + output()));
		}

		int port() {
			return this.port.join();
		}

		int exitCode() {
			return this.process.exitValue();
		}

		String output() {
			synchronized (this.lines) {
				return String.join("\n", this.lines);
			}
		}

		@Override
		public void close() throws InterruptedException {
			this.process.destroy();
			if (!this.process.waitFor(30, TimeUnit.SECONDS)) {
				this.process.destroyForcibly();
			}
		}

	}

}
