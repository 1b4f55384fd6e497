package io.github.ratelimit.web.clientip;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.catalina.Context;
import org.apache.catalina.LifecycleException;
import org.apache.catalina.startup.Tomcat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.servlet.support.SpringBootServletInitializer;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.context.annotation.Configuration;

import io.github.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import io.github.ratelimit.core.RateLimitConfigurationException;
import io.github.ratelimit.web.ClientIpSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The {@code rate-limit.client-ip.*} properties, and the start-up check of forwarding done by the
 * container.
 */
@ExtendWith(OutputCaptureExtension.class)
class ClientIpConfigurationTests {

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(WebMvcAutoConfiguration.class, RateLimitAutoConfiguration.class));

	@Test
	void defaults() {
		this.runner.run((context) -> {
			ClientIpResolver resolver = context.getBean(ClientIpResolver.class);
			assertThat(resolver.getHeader()).isEqualTo("X-Forwarded-For");
			assertThat(resolver.ipv4Prefix).isEqualTo(32);
			assertThat(resolver.ipv6Prefix).isEqualTo(64);
			assertThat(resolver.getSource()).isEqualTo(ClientIpSource.CONNECTION);
			assertThat(resolver.trustedProxies).isEmpty();
		});
	}

	@Test
	void settingsAreBound() {
		this.runner
			.withPropertyValues("rate-limit.client-ip.header=Forwarded", "rate-limit.client-ip.ipv4-prefix=24",
					"rate-limit.client-ip.ipv6-prefix=56", "rate-limit.client-ip.trusted-proxies=10.0.0.0/8")
			.run((context) -> {
				ClientIpResolver resolver = context.getBean(ClientIpResolver.class);
				assertThat(resolver.getHeader()).isEqualTo("Forwarded");
				assertThat(resolver.ipv4Prefix).isEqualTo(24);
				assertThat(resolver.ipv6Prefix).isEqualTo(56);
			});
		this.runner.withPropertyValues("rate-limit.client-ip.source=container")
			.run((context) -> assertThat(context.getBean(ClientIpResolver.class).getSource())
				.isEqualTo(ClientIpSource.CONTAINER));
	}

	@Test
	void badValuesFailTheStartNamingTheProperty() {
		assertFails("rate-limit.client-ip.ipv6-prefix=31",
				"rate-limit.client-ip.ipv6-prefix: the IPv6 prefix must be between 32 and 128, was 31");
		assertFails("rate-limit.client-ip.ipv6-prefix=129", "rate-limit.client-ip.ipv6-prefix");
		assertFails("rate-limit.client-ip.ipv4-prefix=7",
				"rate-limit.client-ip.ipv4-prefix: the IPv4 prefix must be between 8 and 32, was 7");
		assertFails("rate-limit.client-ip.ipv4-prefix=33", "rate-limit.client-ip.ipv4-prefix");
		assertFails("rate-limit.client-ip.header=X Real IP",
				"rate-limit.client-ip.header: 'X Real IP' is not an HTTP header name");
		this.runner
			.withPropertyValues("rate-limit.client-ip.source=container", "rate-limit.client-ip.trusted-proxies=10.0.0.1")
			.run((context) -> assertThat(rootCause(context.getStartupFailure()).getMessage())
				.startsWith("rate-limit.client-ip.trusted-proxies: trusted proxies have no effect with"));
	}

	@Test
	void aMockServletEnvironmentStartsOnAnyPlatform() {
		// MockMvc tests run in no container: nothing rewrites the address, so nothing to refuse.
		this.runner.withPropertyValues("spring.main.cloud-platform=kubernetes")
			.run((context) -> assertThat(context).hasNotFailed());
		this.runner.withPropertyValues("server.forward-headers-strategy=native")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void aWarWithNativeForwardingRefusesToStart() {
		assertThatExceptionOfType(RateLimitConfigurationException.class)
			.isThrownBy(() -> deployedAsWar("server.forward-headers-strategy", "native"))
			.satisfies((ex) -> {
				assertThat(ex.getOrigin()).isEqualTo("server.forward-headers-strategy");
				assertThat(ex.getProblem()).contains("server.forward-headers-strategy=native")
					.contains("a container outside this application (a WAR deployment)");
				assertThat(ex.getAction()).contains("server.forward-headers-strategy=framework")
					.contains("rate-limit.client-ip.source=container");
			});
		assertThatExceptionOfType(RateLimitConfigurationException.class)
			.isThrownBy(() -> deployedAsWar("spring.main.cloud-platform", "kubernetes"))
			.withMessageContaining("native on the detected cloud platform KUBERNETES");
	}

	@Test
	void aWarStartsWhenTheLimiterCanSeeThePeerOrIsToldToTrustTheContainer() throws Exception {
		deployedAsWar("server.forward-headers-strategy", "framework").close();
		deployedAsWar("server.forward-headers-strategy", "native", "rate-limit.client-ip.source", "container").close();
	}

	@Test
	void aRealStartUpExplainsABadPrefix(CapturedOutput output) {
		SpringApplication application = new SpringApplication(App.class);
		assertThatException().isThrownBy(() -> application.run("--server.port=0", "--spring.main.banner-mode=off",
				"--rate-limit.client-ip.ipv6-prefix=200"));
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("Invalid rate limit configuration at rate-limit.client-ip.ipv6-prefix: the IPv6 prefix must be"
					+ " between 32 and 128, was 200.");
	}

	/**
	 * Deploys the application as a WAR into a Tomcat it did not create (started here, as an external
	 * container would be), and returns a handle to undeploy it.
	 * @throws RateLimitConfigurationException when the application refused to start
	 */
	private static AutoCloseable deployedAsWar(String... properties) {
		Tomcat tomcat = new Tomcat();
		Path base;
		try {
			base = Files.createTempDirectory("war-tomcat");
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		tomcat.setBaseDir(base.toString());
		tomcat.setPort(0);
		tomcat.getConnector();
		Context context = tomcat.addContext("", base.toString());
		AtomicReference<Throwable> failure = new AtomicReference<>();
		context.addServletContainerInitializer((classes, servletContext) -> {
			try {
				new War(properties).onStartup(servletContext);
			}
			catch (Throwable ex) {
				failure.set(ex);
			}
		}, null);
		AutoCloseable undeploy = () -> {
			tomcat.stop();
			tomcat.destroy();
		};
		try {
			tomcat.start();
		}
		catch (LifecycleException ex) {
			throw new IllegalStateException(ex);
		}
		if (failure.get() != null) {
			try {
				undeploy.close();
			}
			catch (Exception ex) {
				// already failed
			}
			Throwable cause = rootCause(failure.get());
			if (cause instanceof RateLimitConfigurationException configuration) {
				throw configuration;
			}
			throw new IllegalStateException(failure.get());
		}
		return undeploy;
	}

	/** The application's SpringBootServletInitializer, as a WAR declares it. */
	static class War extends SpringBootServletInitializer {

		private final String[] properties;

		War(String... properties) {
			this.properties = properties;
		}

		@Override
		protected SpringApplicationBuilder configure(SpringApplicationBuilder builder) {
			List<String> pairs = new ArrayList<>();
			for (int i = 0; i < this.properties.length; i += 2) {
				pairs.add(this.properties[i] + "=" + this.properties[i + 1]);
			}
			return builder.sources(WarApp.class).properties(pairs.toArray(String[]::new));
		}

	}

	private void assertFails(String property, String message) {
		this.runner.withPropertyValues(property)
			.run((context) -> assertThat(rootCause(context.getStartupFailure()).getMessage()).startsWith(message));
	}

	private static Throwable rootCause(Throwable failure) {
		Throwable cause = failure;
		while (!(cause instanceof RateLimitConfigurationException) && cause.getCause() != null) {
			cause = cause.getCause();
		}
		return cause;
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration(excludeName = {
			"org.springframework.boot.security.autoconfigure.SecurityAutoConfiguration",
			"org.springframework.boot.security.autoconfigure.web.servlet.ServletWebSecurityAutoConfiguration" })
	static class App {

	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class WarApp {

	}

}
