package io.github.ratelimit.gateway.mvc;

import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.cloud.gateway.server.mvc.common.MvcUtils;

import io.github.ratelimit.web.CountMode;
import io.github.ratelimit.web.key.LimitedRequest;
import io.github.ratelimit.web.policy.HandlerPolicies;
import io.github.ratelimit.web.policy.RateLimitPolicies;
import io.github.ratelimit.web.policy.RateLimitPolicy;

/**
 * What Server MVC routes add to the limiter: their {@code RateLimited} filters decide their policies themselves,
 * while the handler runs ({@link RateLimitedFilterFunctions}), so every request is opened for them; a routed
 * request that got no answer from its backend is an outage, never a failure. Thread-safe.
 */
final class MvcRoutePolicies implements HandlerPolicies {

	private final boolean countsLater;

	MvcRoutePolicies(RateLimitPolicies policies) {
		// Any policy may be a route's, from application.yml or the Java DSL.
		this.countsLater = policies.all().stream().anyMatch((policy) -> policy.count() != CountMode.ALL);
	}

	@Override
	public List<RateLimitPolicy> policiesFor(LimitedRequest request, @Nullable Object handler) {
		return List.of();
	}

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
		// A route of application.yml says its id; a route of the Java DSL says so through its RateLimited filter.
		return status >= 500 && (request.attribute(MvcUtils.GATEWAY_ROUTE_ID_ATTR) != null
				|| request.attribute(RateLimitedFilterFunctions.ROUTED) != null)
				&& request.attribute(MvcUtils.CLIENT_RESPONSE_ATTR) == null;
	}

}
