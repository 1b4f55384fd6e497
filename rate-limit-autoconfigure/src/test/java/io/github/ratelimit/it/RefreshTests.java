package io.github.ratelimit.it;

import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.cloud.context.refresh.ContextRefresher;
import org.springframework.context.ConfigurableApplicationContext;

import io.github.ratelimit.plans.TunableController;
import io.github.ratelimit.testsupport.Http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * Spring Cloud's refresh: the application imports a properties file, the test rewrites it and calls the
 * real {@link ContextRefresher}; the refreshed {@code rate-limit.policies.*} applies as a runtime change
 * does (validated, spent tokens stay spent), a bad value is logged and changes nothing, and a change made
 * through the endpoint stays over the refreshed values.
 */
@ExtendWith(OutputCaptureExtension.class)
class RefreshTests {

	@TempDir
	Path directory;

	Path file;

	ConfigurableApplicationContext context;

	Http http;

	@BeforeEach
	void start() throws IOException {
		this.file = this.directory.resolve("limits.properties");
		write("limit=2");
		this.context = new SpringApplicationBuilder(TestApplication.class, TunableController.class).run(
				"--server.port=0", "--spring.main.banner-mode=off",
				"--spring.config.import=optional:file:" + this.file.toAbsolutePath(),
				"--management.endpoints.web.exposure.include=ratelimits", "--rate-limit.rules[0].path=/tunable",
				"--rate-limit.rules[0].policies=tunable");
		this.http = new Http(Integer.parseInt(this.context.getEnvironment().getProperty("local.server.port")));
	}

	@AfterEach
	void stop() {
		this.context.close();
	}

	@Test
	void aRefreshedLimitAppliesAndSpentTokensStaySpent(CapturedOutput output) throws IOException {
		assertThat(get("spender").statusCode()).isEqualTo(200);
		assertThat(get("spender").statusCode()).isEqualTo(200);
		assertThat(get("spender").statusCode()).isEqualTo(429);
		write("limit=4");
		assertThat(refresh()).contains("rate-limit.policies.tunable.limit");
		HttpResponse<String> more = get("spender");
		assertThat(more.statusCode()).isEqualTo(200);
		assertThat(more.headers().firstValue("RateLimit-Policy")).hasValue("\"tunable\";q=4;w=3600");
		assertThat(get("spender").statusCode()).isEqualTo(200);
		assertThat(get("spender").statusCode()).as("exactly two more").isEqualTo(429);
		assertThat(output).contains("Rate limit policy 'tunable' refreshed from token-bucket(limit=2, period=PT1H, "
				+ "burst=2) to token-bucket(limit=4, period=PT1H, burst=4)");
		assertThat(this.http.get("/actuator/ratelimits").body()).contains("\"limit\":4").contains("\"overridden\":false");
	}

	@Test
	void aBadRefreshedValueIsLoggedAndChangesNothing(CapturedOutput output) throws IOException {
		write("limit=0");
		refresh();
		assertThat(output).contains("Rate limit policy 'tunable' keeps token-bucket(limit=2, period=PT1H, burst=2): "
				+ "the refreshed configuration is refused").contains("limit must be positive, was 0");
		write("limit=many");
		// Spring Cloud's rebinding of the properties bean fails the refresh call; the policies were told first.
		assertThatException().isThrownBy(this::refresh);
		assertThat(output).contains("The refreshed rate-limit.policies cannot be read");
		write("limit=2\nrate-limit.policies.tunable.plans.pro.algorithm=fixed-window");
		// The check of plan fields is the binding's: the rebinding fails the refresh call too, after the policies.
		assertThatException().isThrownBy(this::refresh);
		assertThat(output).contains("The refreshed rate-limit.policies cannot be read")
			.contains("a plan sets only limit, period and burst");
		assertThat(get("client").statusCode()).isEqualTo(200);
		assertThat(get("client").headers().firstValue("RateLimit-Policy")).hasValue("\"tunable\";q=2;w=3600");
	}

	@Test
	void aChangeMadeAtRunTimeStaysOverTheRefreshedValuesUntilRestored(CapturedOutput output) throws IOException {
		assertThat(this.http.postJson("/actuator/ratelimits/tunable", "{\"limit\": 10}").statusCode()).isEqualTo(200);
		write("limit=6\nrate-limit.policies.tunable.key=header:X-Other");
		refresh();
		assertThat(get("client").headers().firstValue("RateLimit-Policy")).hasValue("\"tunable\";q=10;w=3600");
		assertThat(output).contains("settings that apply at the next start only: tunable");
		assertThat(this.http.delete("/actuator/ratelimits/tunable").body()).contains("\"limit\":6");
		assertThat(get("client").headers().firstValue("RateLimit-Policy")).hasValue("\"tunable\";q=6;w=3600");
	}

	private Set<String> refresh() {
		return this.context.getBean(ContextRefresher.class).refresh();
	}

	private HttpResponse<String> get(String client) {
		return this.http.get("/tunable", "X-Client", client);
	}

	private void write(String tunable) throws IOException {
		StringBuilder properties = new StringBuilder("rate-limit.policies.tunable.period=1h\n"
				+ "rate-limit.policies.tunable.key=header:X-Client\n");
		for (String line : tunable.split("\n")) {
			properties.append(line.startsWith("rate-limit.") ? line : "rate-limit.policies.tunable." + line).append('\n');
		}
		Files.writeString(this.file, properties);
	}
}
