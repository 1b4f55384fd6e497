package io.github.ratelimit.gateway.mvc;

import java.util.List;
import java.util.Locale;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.cloud.gateway.server.mvc.config.FilterProperties;
import org.springframework.cloud.gateway.server.mvc.config.GatewayMvcProperties;
import org.springframework.cloud.gateway.server.mvc.config.RouteProperties;
import org.springframework.cloud.gateway.server.mvc.filter.FilterSupplier;
import org.springframework.context.annotation.Bean;

import io.github.ratelimit.web.policy.RateLimitPolicies;

/**
 * Spring Cloud Gateway Server MVC: the {@code RateLimited} route filter ({@link RateLimitedFilterFunctions}) and
 * what the limiter needs for it ({@link MvcRoutePolicies}); a route of {@code application.yml} naming no policy,
 * or one that does not exist, fails the start-up. With {@code rate-limit.enabled=false} the filter lets every
 * request through.
 */
@AutoConfiguration(afterName = "io.github.ratelimit.autoconfigure.RateLimitAutoConfiguration")
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass(FilterSupplier.class)
public final class RateLimitGatewayMvcAutoConfiguration {

	/** The filter, also with {@code rate-limit.enabled=false}, where it lets every request through. */
	@Bean
	FilterSupplier rateLimitedFilterSupplier() {
		return new RateLimitedFilterFunctions.Supplier();
	}

	@Bean
	@ConditionalOnBean(RateLimitPolicies.class)
	MvcRoutePolicies rateLimitMvcRoutePolicies(RateLimitPolicies policies) {
		return new MvcRoutePolicies(policies);
	}

	@Bean
	@ConditionalOnBean(RateLimitPolicies.class)
	SmartInitializingSingleton rateLimitMvcRouteCheck(ObjectProvider<GatewayMvcProperties> properties,
			RateLimitPolicies policies) {
		return () -> {
			GatewayMvcProperties gateway = properties.getIfAvailable();
			if (gateway == null) {
				return;
			}
			String prefix = "spring.cloud.gateway.server.webmvc.";
			for (int i = 0; i < gateway.getRoutes().size(); i++) {
				check(gateway.getRoutes().get(i), prefix + "routes[" + i + "]", policies);
			}
			gateway.getRoutesMap().forEach((id, route) -> check(route, prefix + "routes-map." + id, policies));
		};
	}

	/** A route's RateLimited filters name policies that exist. */
	private static void check(RouteProperties route, String origin, RateLimitPolicies policies) {
		List<FilterProperties> filters = route.getFilters();
		for (int j = 0; j < filters.size(); j++) {
			FilterProperties filter = filters.get(j);
			if (filter.getName() != null && filter.getName().toLowerCase(Locale.ROOT).equals("ratelimited")) {
				policies.named(List.copyOf(filter.getArgs().values()), origin + ".filters[" + j + "]");
			}
		}
	}

}
