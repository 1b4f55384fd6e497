package io.github.ratelimit.autoconfigure;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * A real start-up with bad configuration prints what is wrong, where, and what to do.
 */
@ExtendWith(OutputCaptureExtension.class)
class StartupFailureTests {

	@Test
	void printsTheFailureAnalysis(CapturedOutput output) {
		SpringApplication application = new SpringApplication(App.class);
		assertThatException().isThrownBy(() -> application.run("--server.port=0", "--rate-limit.policies.api.limit=0",
				"--rate-limit.policies.api.period=1m", "--spring.main.banner-mode=off"));
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("Invalid rate limit configuration at rate-limit.policies.api.limit: limit must be positive, was 0.")
			.contains("Set a positive number of requests per period.");
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration(excludeName = {
			"org.springframework.boot.security.autoconfigure.SecurityAutoConfiguration",
			"org.springframework.boot.security.autoconfigure.web.servlet.ServletWebSecurityAutoConfiguration" })
	static class App {

	}
}
