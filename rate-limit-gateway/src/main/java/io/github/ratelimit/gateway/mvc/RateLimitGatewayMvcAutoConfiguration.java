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
 * or one that does not exist, fails the start-up. Only with the starter's servlet configuration.
 */
@AutoConfiguration(afterName = "io.github.ratelimit.autoconfigure.RateLimitAutoConfiguration")
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass(FilterSupplier.class)
@ConditionalOnBean(RateLimitPolicies.class)
public final class RateLimitGatewayMvcAutoConfiguration {

	@Bean
	FilterSupplier rateLimitedFilterSupplier() {
		return new RateLimitedFilterFunctions.Supplier();
	}

	@Bean
	MvcRoutePolicies rateLimitMvcRoutePolicies(RateLimitPolicies policies) {
		return new MvcRoutePolicies(policies);
	}

	@Bean
	SmartInitializingSingleton rateLimitMvcRouteCheck(ObjectProvider<GatewayMvcProperties> properties,
			RateLimitPolicies policies) {
		return () -> {
			GatewayMvcProperties gateway = properties.getIfAvailable();
			List<RouteProperties> routes = (gateway != null) ? gateway.getRoutes() : List.of();
			for (int i = 0; i < routes.size(); i++) {
				List<FilterProperties> filters = routes.get(i).getFilters();
				for (int j = 0; j < filters.size(); j++) {
					FilterProperties filter = filters.get(j);
					if (filter.getName() != null && filter.getName().toLowerCase(Locale.ROOT).equals("ratelimited")) {
						RateLimitedFilterFunctions.policies(policies, List.copyOf(filter.getArgs().values()),
								"spring.cloud.gateway.server.webmvc.routes[" + i + "].filters[" + j + "]");
					}
				}
			}
		};
	}

}
