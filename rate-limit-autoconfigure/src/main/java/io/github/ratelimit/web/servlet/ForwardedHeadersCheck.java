package io.github.ratelimit.web.servlet;

import java.util.Locale;
import java.util.function.Supplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.cloud.CloudPlatform;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ApplicationContext;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;
import org.springframework.web.context.WebApplicationContext;

import io.github.ratelimit.core.RateLimitConfigurationException;
import io.github.ratelimit.web.ClientIpSource;
import io.github.ratelimit.web.clientip.ClientIpResolver;

/**
 * Refuses to start when the container rewrites the client address from forwarding headers and the
 * limiter cannot see past it, so that no client can choose its own key unnoticed.
 *
 * <p>Spring's {@code ForwardedHeaderFilter} ({@code server.forward-headers-strategy=framework}) only
 * wraps the request, and the {@link ClientIpResolver} looks through wrappers. Tomcat's
 * {@code RemoteIpValve} ({@code native}, which Spring Boot also turns on by itself when it detects a
 * cloud platform such as Kubernetes) rewrites the request itself, so the embedded Tomcat gets a
 * {@link ConnectionPeerValve} ahead of it. Anywhere else with {@code native} (Jetty's forwarded
 * customizer, a WAR whose external container does its own forwarding), the resolver would see the
 * rewritten address: the start-up fails, unless {@code rate-limit.client-ip.source=container} asks
 * for the container's resolution on purpose. Checked once all singletons exist, when the embedded
 * server (if any) has been created.
 */
final class ForwardedHeadersCheck implements SmartInitializingSingleton {

	private static final Log logger = LogFactory.getLog(ForwardedHeadersCheck.class);

	private static final String WEB_SERVER_CONTEXT = "org.springframework.boot.web.server.context.WebServerApplicationContext";

	private final ApplicationContext context;

	private final Supplier<ClientIpResolver> resolver;

	private volatile boolean peerRecorded;

	ForwardedHeadersCheck(ApplicationContext context, Supplier<ClientIpResolver> resolver) {
		this.context = context;
		this.resolver = resolver;
	}

	/** Called when a {@link ConnectionPeerValve} was put ahead of the container's own valves. */
	void peerRecorded() {
		this.peerRecorded = true;
	}

	@Override
	public void afterSingletonsInstantiated() {
		Environment environment = this.context.getEnvironment();
		Strategy strategy = Strategy.of(environment);
		if (this.resolver.get().getSource() == ClientIpSource.CONTAINER) {
			if (strategy == Strategy.FRAMEWORK) {
				logger.warn("rate-limit.client-ip.source=container with server.forward-headers-strategy=framework:"
						+ " Spring's ForwardedHeaderFilter believes the forwarding headers of every client, so"
						+ " clients that reach the application directly choose their own rate limit keys");
			}
			return;
		}
		if (strategy != Strategy.NATIVE || this.peerRecorded) {
			return;
		}
		String where = where();
		if (where == null) {
			// No container at all (a mock servlet environment): nothing rewrites the address.
			return;
		}
		String setting = (environment.getProperty(Strategy.PROPERTY) != null)
				? "server.forward-headers-strategy=native"
				: "server.forward-headers-strategy unset, so native on the detected cloud platform "
						+ CloudPlatform.getActive(environment);
		throw new RateLimitConfigurationException(Strategy.PROPERTY,
				"the container rewrites the client address from forwarding headers (" + setting + ") before the"
						+ " rate limiter sees the request, and on " + where
						+ " the limiter cannot see past it, so clients could choose their own rate limit keys",
				"Set server.forward-headers-strategy=framework (the limiter reads past Spring's ForwardedHeaderFilter"
						+ " and applies rate-limit.client-ip.trusted-proxies) or none, or set"
						+ " rate-limit.client-ip.source=container to take the container's resolution on purpose");
	}

	/**
	 * Returns where the address is rewritten out of our reach, or {@code null} when there is no
	 * container at all.
	 */
	private @Nullable String where() {
		if (ClassUtils.isPresent(WEB_SERVER_CONTEXT, getClass().getClassLoader())) {
			String embedded = WebServers.embedded(this.context);
			if (embedded != null) {
				return embedded;
			}
		}
		// A WAR (Spring Boot 4 deploys it in a plain web application context) runs in a container it
		// did not create; a mock servlet environment (MockMvc tests) in none.
		if (this.context instanceof WebApplicationContext web && web.getServletContext() != null
				&& !web.getServletContext().getClass().getName().startsWith("org.springframework.mock.")) {
			return "a container outside this application (a WAR deployment)";
		}
		return null;
	}

	/** Kept apart so that the check loads without Spring Boot's web server module. */
	private static final class WebServers {

		static @Nullable String embedded(ApplicationContext context) {
			if (context instanceof WebServerApplicationContext webServerContext
					&& webServerContext.getWebServer() != null) {
				return "this embedded server (" + webServerContext.getWebServer().getClass().getSimpleName()
						+ "; only on embedded Tomcat can the limiter record the connection's peer first)";
			}
			return null;
		}

	}

	/** The effective {@code server.forward-headers-strategy}, deduced as Spring Boot does. */
	enum Strategy {

		NONE, FRAMEWORK, NATIVE;

		static final String PROPERTY = "server.forward-headers-strategy";

		static Strategy of(Environment environment) {
			String configured = environment.getProperty(PROPERTY);
			if (configured == null || configured.isBlank()) {
				CloudPlatform platform = CloudPlatform.getActive(environment);
				return (platform != null && platform.isUsingForwardHeaders()) ? NATIVE : NONE;
			}
			return switch (configured.trim().toLowerCase(Locale.ROOT)) {
				case "native" -> NATIVE;
				case "framework" -> FRAMEWORK;
				default -> NONE;
			};
		}

	}

}
