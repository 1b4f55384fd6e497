package io.github.ratelimit.gateway;

import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.cloud.gateway.filter.GatewayFilter;
import org.springframework.cloud.gateway.filter.factory.AbstractGatewayFilterFactory;

import io.github.ratelimit.core.RateLimitConfigurationException;
import io.github.ratelimit.web.policy.RateLimitPolicies;
import io.github.ratelimit.web.policy.RateLimitPolicy;

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
		List<RateLimitPolicy> named = new ArrayList<>(config.getPolicies().size());
		for (String name : config.getPolicies()) {
			RateLimitPolicy policy = policies.get(name.trim());
			if (policy == null) {
				throw new RateLimitConfigurationException("RateLimited=" + String.join(",", config.getPolicies()),
						"no policy named '" + name.trim() + "'",
						"Define it under rate-limit.policies." + name.trim() + " (defined: "
								+ String.join(", ", policies.all().stream().map(RateLimitPolicy::name).sorted().toList())
								+ ")");
			}
			if (named.stream().noneMatch((other) -> other.id().equals(policy.id()))) {
				named.add(policy);
			}
		}
		if (named.isEmpty()) {
			throw new RateLimitConfigurationException("RateLimited", "names no policy",
					"Name one or more policies of rate-limit.policies: RateLimited=api,per-user");
		}
		return this.routes.named(named);
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
