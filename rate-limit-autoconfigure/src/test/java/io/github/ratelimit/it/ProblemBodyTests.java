package io.github.ratelimit.it;

import java.net.http.HttpResponse;
import java.util.Map;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import io.github.ratelimit.testsupport.Http;

import static io.github.ratelimit.it.RateLimitEndToEndTests.header;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The 429's problem body is written by the application's JSON library with the application's
 * settings (here indented, and a SNAKE_CASE naming strategy), and keeps RFC 9457's member names and
 * {@code violated-policies} at the top level.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.jackson.property-naming-strategy=SNAKE_CASE",
				"spring.jackson.serialization.indent-output=true" })
class ProblemBodyTests {

	@LocalServerPort
	int port;

	@Test
	void theApplicationsJsonSettingsApplyButNotToMemberNames() {
		Http http = new Http(this.port);
		for (int i = 0; i < 3; i++) {
			assertThat(http.get("/t/inline").statusCode()).isEqualTo(200);
		}
		HttpResponse<String> rejected = http.get("/t/inline");
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(header(rejected, "Content-Type")).isEqualTo("application/problem+json");
		assertThat(rejected.body()).as("indented, as the application writes JSON").contains("\n");
		Map<String, Object> members = JsonMapper.builder().build().readValue(rejected.body(), Map.class);
		assertThat(members).containsOnlyKeys("type", "title", "status", "detail", "instance", "violated-policies");
		assertThat(members).containsEntry("type", "https://iana.org/assignments/http-problem-types#quota-exceeded")
			.containsEntry("status", 429)
			.containsEntry("instance", "/t/inline")
			.containsEntry("violated-policies", java.util.List.of("LimitedController.inline"));
	}
}
