package io.github.ratelimit.sample;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.testsupport.JarProcess;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Starts the packaged sample as an AOT-processed application ({@code -Dspring.aot.enabled=true}), as a
 * user would, and calls it over HTTP. Runs after {@code process-aot} and {@code repackage} (failsafe), in
 * sample-app and in sample-reactive-app (from this module's test jar), each against its own jar.
 */
class SampleAotIT {

	private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	@Test
	void theAotProcessedSampleLimitsAndItsConditionsAreFixedAtBuildTime() throws Exception {
		// rate-limit.enabled=false at run time cannot remove beans that AOT fixed at build time.
		try (JarProcess sample = launch("--rate-limit.enabled=false").started()) {
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
		try (JarProcess sample = launch("--rate-limit.policies.api.brust=3").ended()) {
			assertThat(sample.exitCode()).isNotZero();
			assertThat(sample.output()).contains("Invalid rate limit configuration at rate-limit.policies.api.brust")
				.contains("Did you mean rate-limit.policies.api.burst?");
		}
	}

	private HttpResponse<String> get(int port, String path) throws IOException, InterruptedException {
		return this.client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).GET().build(),
				HttpResponse.BodyHandlers.ofString());
	}

	/** The module's executable jar, AOT-processed, not the test jar beside it (sample-reactive-app runs these checks too). */
	private static JarProcess launch(String... arguments) throws IOException {
		Path jar = JarProcess.jar(Path.of("target"), "sample-(reactive-)?app-[0-9].*(?<!-tests)\\.jar");
		List<String> all = new ArrayList<>(List.of("--server.port=0"));
		all.addAll(List.of(arguments));
		return JarProcess.launch(List.of("-Dspring.aot.enabled=true"), jar, all.toArray(String[]::new));
	}

}
