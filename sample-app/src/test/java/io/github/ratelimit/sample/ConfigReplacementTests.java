package io.github.ratelimit.sample;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Shows that a configuration file given with {@code spring.config.additional-location} replaces the
 * sample's rules: a list property from a later source replaces the whole list rather than merging
 * with it, so {@code /api/hello} loses its rule and {@code /api/ping} gains one.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = "spring.config.additional-location=classpath:/replaced-rules.yml")
class ConfigReplacementTests {

	private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	@LocalServerPort
	private int port;

	@Test
	void replacedRulesLimitPingOnly() throws Exception {
		HttpResponse<String> first = get("/api/ping");
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(first.headers().firstValue("X-RateLimit-Limit")).hasValue("1");
		HttpResponse<String> second = get("/api/ping");
		assertThat(second.statusCode()).isEqualTo(429);
		assertThat(second.body()).contains("\"violated-policies\":[\"ping\"]");
		for (int i = 0; i < 10; i++) {
			HttpResponse<String> hello = get("/api/hello");
			assertThat(hello.statusCode()).isEqualTo(200);
			assertThat(hello.headers().firstValue("X-RateLimit-Limit")).isEmpty();
		}
	}

	private HttpResponse<String> get(String path) throws IOException, InterruptedException {
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + path)).GET().build();
		return this.client.send(request, HttpResponse.BodyHandlers.ofString());
	}

}
