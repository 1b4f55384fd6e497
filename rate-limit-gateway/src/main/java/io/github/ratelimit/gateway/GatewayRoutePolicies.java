package io.github.ratelimit.gateway;

import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.cloud.gateway.filter.GatewayFilter;
import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.filter.OrderedGatewayFilter;
import org.springframework.cloud.gateway.route.Route;
import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.web.server.ServerWebExchange;

import io.github.ratelimit.web.CountMode;
import io.github.ratelimit.web.key.LimitedRequest;
import io.github.ratelimit.web.policy.HandlerPolicies;
import io.github.ratelimit.web.policy.RateLimitPolicy;

/**
 * The policies a gateway route names with its {@code RateLimited} filters (its default filters included), read
 * from the route WebFlux found for the request, which the gateway keeps as an exchange attribute. A routed
 * request that got no answer from its backend (it could not be reached, or was too slow: the gateway's own 5xx)
 * is an outage: {@code count: failures} never counts it, so that a backend that is down locks nobody out. The
 * backend's own 5xx is an answer, and counts: else a backend answering wrong passwords with a 500 would give
 * its guessers no lockout. Thread-safe.
 */
final class GatewayRoutePolicies implements HandlerPolicies {

	private volatile boolean countsLater;

	/** A route's filter naming these policies; routes may be defined at any time. */
	GatewayFilter named(List<RateLimitPolicy> policies) {
		if (policies.stream().anyMatch((policy) -> policy.count() != CountMode.ALL)) {
			this.countsLater = true;
		}
		return new RouteFilter(List.copyOf(policies));
	}

	@Override
	public List<RateLimitPolicy> policiesFor(LimitedRequest request, @Nullable Object handler) {
		if (!(request.attribute(ServerWebExchangeUtils.GATEWAY_ROUTE_ATTR) instanceof Route route)) {
			return List.of();
		}
		List<RateLimitPolicy> named = List.of();
		for (GatewayFilter filter : route.getFilters()) {
			GatewayFilter delegate = filter;
			while (delegate instanceof OrderedGatewayFilter ordered) {
				delegate = ordered.getDelegate();
			}
			if (delegate instanceof RouteFilter routeFilter) {
				named = named.isEmpty() ? routeFilter.policies() : merged(named, routeFilter.policies());
			}
		}
		return named;
	}

	/** Routes may name policies at any time (a refresh, the actuator, discovery): every request is looked at. */
	@Override
	public boolean any() {
		return true;
	}

	@Override
	public boolean countsLater() {
		return this.countsLater;
	}

	@Override
	public boolean isOutage(LimitedRequest request, int status) {
		return status >= 500 && request.attribute(ServerWebExchangeUtils.GATEWAY_ROUTE_ATTR) != null
				&& request.attribute(ServerWebExchangeUtils.CLIENT_RESPONSE_ATTR) == null;
	}

	private static List<RateLimitPolicy> merged(List<RateLimitPolicy> first, List<RateLimitPolicy> second) {
		List<RateLimitPolicy> merged = new ArrayList<>(first);
		for (RateLimitPolicy policy : second) {
			if (merged.stream().noneMatch((other) -> other.id().equals(policy.id()))) {
				merged.add(policy);
			}
		}
		return merged;
	}

	/**
	 * A route's {@code RateLimited} filter: what it names was decided before the route's filters ran, so on the
	 * chain it only passes the request on.
	 */
	record RouteFilter(List<RateLimitPolicy> policies) implements GatewayFilter {

		@Override
		public Mono<Void> filter(ServerWebExchange exchange, GatewayFilterChain chain) {
			return chain.filter(exchange);
		}

		@Override
		public String toString() {
			return "RateLimited" + this.policies.stream().map(RateLimitPolicy::name).toList();
		}

	}

}
