package io.github.ratelimit.samplegateway;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.github.ratelimit.testsupport.JarProcess;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The README's commands, from the outside: the servlet sample's jar with its own limits off, this gateway's jar in
 * front of it, and HTTP requests that reach the 429 at the gateway. Runs after {@code repackage} (failsafe).
 */
class SampleGatewayIT {

	private static JarProcess backend;

	private static JarProcess gateway;

	private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	@BeforeAll
	static void start() throws Exception {
		// Both start at once: the gateway is told the backend's port before the backend listens on it.
		int backendPort;
		try (ServerSocket socket = new ServerSocket(0)) {
			backendPort = socket.getLocalPort();
		}
		backend = JarProcess.launch(List.of(),
				JarProcess.jar(Path.of("../sample-app/target"), "sample-app-[0-9].*(?<!-tests)\\.jar"),
				"--server.port=" + backendPort, "--rate-limit.enabled=false");
		// The sample's slow-down, shortened so that the test waits milliseconds, not seconds.
		gateway = JarProcess.launch(List.of(), JarProcess.jar(Path.of("target"), "sample-gateway-[0-9].*\\.jar"),
				"--server.port=0",
				"--backend.uri=http://127.0.0.1:" + backendPort, "--rate-limit.policies.login.slow-down.delay=20ms",
				"--rate-limit.policies.login.slow-down.max-delay=80ms");
		backend.started();
		gateway.started();
	}

	@AfterAll
	static void stop() throws InterruptedException {
		if (gateway != null) {
			gateway.close();
		}
		if (backend != null) {
			backend.close();
		}
	}

	@Test
	void helloIsLimitedAtTheGatewayFiveAMinute() throws Exception {
		for (int i = 0; i < 5; i++) {
			HttpResponse<String> allowed = get("/api/hello");
			assertThat(allowed.statusCode()).isEqualTo(200);
			assertThat(allowed.headers().firstValue("X-RateLimit-Limit")).hasValue("5");
		}
		HttpResponse<String> rejected = get("/api/hello");
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(rejected.headers().firstValue("Retry-After")).isPresent();
		assertThat(rejected.body()).contains("\"violated-policies\":[\"api\"]");
		for (int i = 0; i < 8; i++) {
			assertThat(get("/open/api/ping").statusCode()).as("the open route, stripped, not limited").isEqualTo(200);
		}
	}

	@Test
	void failedLoginsAreSlowedThenLockedOutPerUsername() throws Exception {
		for (int i = 0; i < 5; i++) {
			HttpResponse<String> failed = login("mallory", "guess" + i);
			assertThat(failed.statusCode()).as("the backend's answer to a wrong password").isEqualTo(401);
		}
		HttpResponse<String> locked = login("mallory", "correct-horse");
		assertThat(locked.statusCode()).as("locked out at the gateway, even with the right password").isEqualTo(429);
		assertThat(locked.body()).contains("\"violated-policies\":[\"login\"]");
		assertThat(login("alice", "correct-horse").body()).as("another username, the form forwarded whole")
			.isEqualTo("Welcome, alice");
	}

	private HttpResponse<String> get(String path) throws IOException, InterruptedException {
		return this.client.send(HttpRequest.newBuilder(uri(path)).GET().build(), HttpResponse.BodyHandlers.ofString());
	}

	private HttpResponse<String> login(String username, String password) throws IOException, InterruptedException {
		return this.client.send(HttpRequest.newBuilder(uri("/api/login"))
			.header("Content-Type", "application/x-www-form-urlencoded")
			.POST(HttpRequest.BodyPublishers.ofString("username=" + username + "&password=" + password))
			.build(), HttpResponse.BodyHandlers.ofString());
	}

	private static URI uri(String path) {
		return URI.create("http://127.0.0.1:" + gateway.port() + path);
	}

}
