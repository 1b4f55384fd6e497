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

	@Test
	void aCheckMadeWhileBindingPrintsTheRateLimitAnalysis(CapturedOutput output) {
		SpringApplication application = new SpringApplication(App.class);
		assertThatException().isThrownBy(() -> application.run("--server.port=0", "--rate-limit.policies.api.limit=5",
				"--rate-limit.policies.api.period=60", "--spring.main.banner-mode=off"));
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("Invalid rate limit configuration at rate-limit.policies.api.period: the duration '60' has no unit")
			.contains("Write it with its unit, e.g. 60s, or 60ms if milliseconds are meant.");
	}

	@Test
	void aTypoInAnAdditionalLocationNamesTheFileTheLineAndTheClosestProperty(CapturedOutput output) {
		SpringApplication application = new SpringApplication(App.class);
		assertThatException().isThrownBy(() -> application.run("--server.port=0", "--spring.main.banner-mode=off",
				"--spring.config.additional-location=classpath:/strict/typo.yml"));
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("Invalid rate limit configuration at rate-limit.policies.api.brust: no such property, set in "
					+ "class path resource [strict/typo.yml] - 6:14.")
			.contains("Did you mean rate-limit.policies.api.burst? Rename or remove it");
	}

	@Test
	void aTypoInAProfileOrAnImportedFileFailsToo(CapturedOutput output) {
		SpringApplication application = new SpringApplication(App.class);
		assertThatException().isThrownBy(() -> application.run("--server.port=0", "--spring.main.banner-mode=off",
				"--spring.config.additional-location=classpath:/strict/", "--spring.profiles.active=typo",
				"--spring.config.import=classpath:/strict/imported.yml"));
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("- rate-limit.storee.type (class path resource [strict/imported.yml]")
			.contains("did you mean rate-limit.store.type?")
			.contains("- rate-limit.rules[0].polices (class path resource [strict/application-typo.yml]")
			.contains("did you mean rate-limit.rules[0].policies?")
			.doesNotContain("polices[0]")
			.doesNotContain("?.");
	}

	@Test
	void aValueOutsideAnEnumNamesThePropertyAndTheValidValues(CapturedOutput output) {
		SpringApplication application = new SpringApplication(App.class);
		assertThatException().isThrownBy(() -> application.run("--server.port=0", "--spring.main.banner-mode=off",
				"--rate-limit.policies.api.limit=5", "--rate-limit.policies.api.period=1m",
				"--rate-limit.policies.api.algorithm=tokenbucket2"));
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("Failed to bind properties under 'rate-limit.policies.api.algorithm'")
			.contains("The following values are valid:")
			.contains("    sliding-window-counter")
			.contains("    token-bucket");
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration(excludeName = {
			"org.springframework.boot.security.autoconfigure.SecurityAutoConfiguration",
			"org.springframework.boot.security.autoconfigure.web.servlet.ServletWebSecurityAutoConfiguration" })
	static class App {

	}
}
