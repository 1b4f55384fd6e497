package io.github.ratelimit.web.servlet;

import java.util.Map;

import org.junit.jupiter.api.Test;

import org.springframework.boot.web.server.WebServer;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.core.env.MapPropertySource;
import org.springframework.web.context.support.GenericWebApplicationContext;

import io.github.ratelimit.core.RateLimitConfigurationException;
import io.github.ratelimit.web.ClientIpSource;
import io.github.ratelimit.web.clientip.ClientIpResolver;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Tests for {@link ForwardedHeadersCheck} on an embedded server other than Tomcat (Jetty, say),
 * where the limiter cannot record the connection's peer before the server's forwarding rewrite.
 */
class ForwardedHeadersCheckTests {

	@Test
	void nativeForwardingOnAnotherEmbeddedServerRefusesToStart() {
		assertThatExceptionOfType(RateLimitConfigurationException.class)
			.isThrownBy(() -> check(Map.of("server.forward-headers-strategy", "native"), ClientIpSource.CONNECTION)
				.afterSingletonsInstantiated())
			.withMessageContaining("on this embedded server (JettyLikeWebServer;")
			.withMessageContaining("rate-limit.client-ip.source=container");
		assertThatExceptionOfType(RateLimitConfigurationException.class)
			.isThrownBy(() -> check(Map.of("spring.main.cloud-platform", "heroku"), ClientIpSource.CONNECTION)
				.afterSingletonsInstantiated())
			.withMessageContaining("native on the detected cloud platform HEROKU");
	}

	@Test
	void startsWhenThePeerIsRecordedOrNothingRewritesOrTheContainerIsChosen() {
		ForwardedHeadersCheck recorded = check(Map.of("server.forward-headers-strategy", "native"),
				ClientIpSource.CONNECTION);
		recorded.peerRecorded();
		assertThatCode(recorded::afterSingletonsInstantiated).doesNotThrowAnyException();
		assertThatCode(() -> check(Map.of("server.forward-headers-strategy", "framework"),
				ClientIpSource.CONNECTION).afterSingletonsInstantiated()).doesNotThrowAnyException();
		assertThatCode(() -> check(Map.of(), ClientIpSource.CONNECTION).afterSingletonsInstantiated())
			.doesNotThrowAnyException();
		assertThatCode(() -> check(Map.of("server.forward-headers-strategy", "native"),
				ClientIpSource.CONTAINER).afterSingletonsInstantiated()).doesNotThrowAnyException();
	}

	private static ForwardedHeadersCheck check(Map<String, Object> properties, ClientIpSource source) {
		EmbeddedContext context = new EmbeddedContext();
		context.getEnvironment().getPropertySources().addFirst(new MapPropertySource("test", properties));
		ClientIpResolver resolver = ClientIpResolver.builder().source(source).build();
		return new ForwardedHeadersCheck(context, () -> resolver);
	}

	/** An application context whose embedded server is not Tomcat. */
	static class EmbeddedContext extends GenericWebApplicationContext implements WebServerApplicationContext {

		@Override
		public WebServer getWebServer() {
			return new JettyLikeWebServer();
		}

		@Override
		public String getServerNamespace() {
			return null;
		}

	}

	static class JettyLikeWebServer implements WebServer {

		@Override
		public void start() {
		}

		@Override
		public void stop() {
		}

		@Override
		public int getPort() {
			return 8080;
		}

	}

}
