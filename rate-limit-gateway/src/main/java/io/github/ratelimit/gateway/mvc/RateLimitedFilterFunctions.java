package io.github.ratelimit.gateway.mvc;

import java.util.List;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

import org.springframework.cloud.gateway.server.mvc.common.MvcUtils;
import org.springframework.cloud.gateway.server.mvc.common.Shortcut;
import org.springframework.cloud.gateway.server.mvc.filter.SimpleFilterSupplier;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.util.LinkedMultiValueMap;
import org.springframework.util.MultiValueMap;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;
import org.springframework.web.servlet.ModelAndView;
import org.springframework.web.servlet.function.HandlerFilterFunction;
import org.springframework.web.servlet.function.ServerResponse;

import io.github.ratelimit.web.policy.RateLimitPolicies;
import io.github.ratelimit.web.policy.RateLimitPolicy;
import io.github.ratelimit.web.servlet.RouteLimits;

/**
 * The {@code RateLimited} filter of Spring Cloud Gateway Server MVC routes, from {@code application.yml}
 * ({@code filters: [RateLimited=api,per-user]}) or the Java DSL ({@code .filter(rateLimited("api"))}). The
 * route's policies are decided when its handler runs, with what the path rules decided before the handler (a
 * policy both name counts once), all or nothing: a 429 gives back what the rules took. A request that must wait
 * for its turn waits on its thread. {@code param:} keys read the form's fields as the rate limit filter saw them,
 * before the gateway's {@code FormFilter} hides them. With {@code rate-limit.enabled=false} the filter lets every
 * request through.
 */
public final class RateLimitedFilterFunctions {

	/** The request attribute that says a route with this filter handles the request (its outage rule). */
	static final String ROUTED = RateLimitedFilterFunctions.class.getName() + ".routed";

	private RateLimitedFilterFunctions() {
	}

	/**
	 * The filter naming a route's policies.
	 * @param policies policies of {@code rate-limit.policies}
	 * @return the filter
	 */
	@Shortcut(type = Shortcut.Type.LIST)
	public static HandlerFilterFunction<ServerResponse, ServerResponse> rateLimited(String... policies) {
		List<String> names = List.of(policies);
		return new HandlerFilterFunction<>() {

			private volatile @Nullable List<RateLimitPolicy> named;

			@Override
			public ServerResponse filter(org.springframework.web.servlet.function.ServerRequest request,
					org.springframework.web.servlet.function.HandlerFunction<ServerResponse> next) throws Exception {
				List<RateLimitPolicy> found = this.named;
				if (found == null) {
					RateLimitPolicies policies = MvcUtils.getApplicationContext(request)
						.getBeanProvider(RateLimitPolicies.class)
						.getIfAvailable();
					if (policies == null) {
						// rate-limit.enabled=false: every request goes through.
						return next.handle(request);
					}
					found = policies.named(names, "RateLimited=" + String.join(",", names));
					this.named = found;
				}
				request.attributes().put(ROUTED, Boolean.TRUE);
				HttpServletRequest servletRequest = request.servletRequest();
				HttpServletResponse response = ((ServletRequestAttributes) RequestContextHolder.currentRequestAttributes())
					.getResponse();
				if (response != null && !RouteLimits.decide(servletRequest, response, found)) {
					return new Answered(response);
				}
				return next.handle(request);
			}

		};
	}

	/** Exposes {@link #rateLimited} to the gateway's routes of {@code application.yml}. */
	static final class Supplier extends SimpleFilterSupplier {

		Supplier() {
			super(RateLimitedFilterFunctions.class);
		}

	}

	/** A response the limiter wrote already (a 429, a 400): nothing more to write. */
	private record Answered(HttpServletResponse response) implements ServerResponse {

		@Override
		public HttpStatusCode statusCode() {
			return HttpStatusCode.valueOf(this.response.getStatus());
		}

		@Override
		public HttpHeaders headers() {
			return new HttpHeaders();
		}

		@Override
		public MultiValueMap<String, jakarta.servlet.http.Cookie> cookies() {
			return new LinkedMultiValueMap<>();
		}

		@Override
		public @Nullable ModelAndView writeTo(HttpServletRequest request, HttpServletResponse response, Context context) {
			return null;
		}

	}

}
