package io.github.ratelimit.web.reactive;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.cloud.CloudPlatform;
import org.springframework.boot.web.server.reactive.ReactiveWebServerFactory;
import org.springframework.core.env.Environment;

import io.github.ratelimit.core.RateLimitConfigurationException;
import io.github.ratelimit.web.ClientIpSource;
import io.github.ratelimit.web.clientip.ClientIpResolver;

/**
 * Fails the start-up of a WebFlux application whose server rewrites the request's remote address from
 * forwarding headers ({@code server.forward-headers-strategy} {@code native} or {@code framework}, which Spring
 * Boot also turns on by itself on a cloud platform) when the limiter cannot see past it: it reads the
 * connection's peer on Reactor Netty only. Elsewhere (Tomcat, Jetty) any client could choose its own key. Not
 * checked with {@code rate-limit.client-ip.source=container}, which asks for the server's resolution on
 * purpose. Checked once all singletons exist, when the embedded server (if any) has been created.
 */
final class ReactivePeerCheck implements SmartInitializingSingleton {

	private final ListableBeanFactory beans;

	private final Environment environment;

	private final ClientIpResolver clientIps;

	ReactivePeerCheck(ListableBeanFactory beans, Environment environment, ClientIpResolver clientIps) {
		this.beans = beans;
		this.environment = environment;
		this.clientIps = clientIps;
	}

	@Override
	public void afterSingletonsInstantiated() {
		if (!rewritesRemoteAddress() || this.clientIps.getSource() == ClientIpSource.CONTAINER) {
			return;
		}
		for (String name : this.beans.getBeanNamesForType(ReactiveWebServerFactory.class, false, false)) {
			Class<?> type = this.beans.getType(name);
			if (type != null && !isNetty(type)) {
				throw new RateLimitConfigurationException("server.forward-headers-strategy",
						"the server (" + type.getSimpleName() + ") rewrites the request's remote address from any "
								+ "client's forwarding headers, and the rate limiter reads the connection's peer on "
								+ "Reactor Netty only",
						"Run WebFlux on Reactor Netty, or set server.forward-headers-strategy=none and list your "
								+ "proxies in rate-limit.client-ip.trusted-proxies (or set rate-limit.client-ip.source="
								+ "container to key by the server's resolution on purpose)");
			}
		}
	}

	/** Whether a forwarding strategy is on: set, or Spring Boot's default on a cloud platform (Kubernetes, ...). */
	private boolean rewritesRemoteAddress() {
		String strategy = this.environment.getProperty("server.forward-headers-strategy");
		if (strategy == null) {
			CloudPlatform platform = CloudPlatform.getActive(this.environment);
			return platform != null && platform.isUsingForwardHeaders();
		}
		return !strategy.trim().equalsIgnoreCase("none");
	}

	private static boolean isNetty(Class<?> type) {
		for (Class<?> current = type; current != null; current = current.getSuperclass()) {
			if (current.getName().equals("org.springframework.boot.reactor.netty.NettyReactiveWebServerFactory")) {
				return true;
			}
		}
		return false;
	}
}
