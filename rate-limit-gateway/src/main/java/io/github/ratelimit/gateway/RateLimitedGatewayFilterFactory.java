package io.github.ratelimit.gateway;

import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.cloud.gateway.filter.GatewayFilter;
import org.springframework.cloud.gateway.filter.factory.AbstractGatewayFilterFactory;

import io.github.ratelimit.web.policy.RateLimitPolicies;

/**
 * The {@code RateLimited} filter of a Spring Cloud Gateway route: {@code filters: [RateLimited=api]}, or several
 * policies, {@code RateLimited=api,per-user}. The route's requests get what a {@code @RateLimited} handler naming
 * those policies gets: they are decided with the path rules that match, once WebFlux found the route, all or
 * nothing, in one store call (each budget once), before any filter of the route runs; a request the gateway
 * retries is not decided again. A name that is no policy of {@code rate-limit.policies} fails as the route is
 * defined. With {@code rate-limit.enabled=false} the filter lets every request through.
 */
public final class RateLimitedGatewayFilterFactory extends AbstractGatewayFilterFactory<RateLimitedGatewayFilterFactory.Config> {

	/** The starter's policies; {@code null} with {@code rate-limit.enabled=false}. */
	private final @Nullable RateLimitPolicies policies;

	private final GatewayRoutePolicies routes;

	RateLimitedGatewayFilterFactory(@Nullable RateLimitPolicies policies, GatewayRoutePolicies routes) {
		super(Config.class);
		this.policies = policies;
		this.routes = routes;
	}

	@Override
	public List<String> shortcutFieldOrder() {
		return List.of("policies");
	}

	@Override
	public ShortcutType shortcutType() {
		return ShortcutType.GATHER_LIST;
	}

	@Override
	public GatewayFilter apply(Config config) {
		RateLimitPolicies policies = this.policies;
		if (policies == null) {
			return (exchange, chain) -> chain.filter(exchange);
		}
		String origin = "RateLimited=" + String.join(",", config.getPolicies());
		return this.routes.named(policies.named(config.getPolicies(), origin));
	}

	/** What a route's {@code RateLimited} filter says: the policies, by name. */
	public static class Config {

		private List<String> policies = new ArrayList<>();

		/**
		 * Returns the names of the route's policies.
		 * @return the names, in order
		 */
		public List<String> getPolicies() {
			return this.policies;
		}

		/**
		 * Sets the names of the route's policies.
		 * @param policies policies of {@code rate-limit.policies}
		 */
		public void setPolicies(List<String> policies) {
			this.policies = policies;
		}

	}

}
