package io.github.ratelimit.web;

import java.util.ArrayList;
import java.util.List;

import jakarta.servlet.http.HttpServletRequest;

import org.springframework.http.server.PathContainer;
import org.springframework.http.server.RequestPath;
import org.springframework.web.cors.CorsUtils;
import org.springframework.web.util.ServletRequestPathUtils;

/**
 * Finds every policy that applies to a request: those of matching path rules, then those of the
 * {@link RateLimited} handler it will be dispatched to. A policy named twice (by a rule and by an
 * annotation) counts once, with the annotation's cost. A CORS preflight ({@code OPTIONS} with
 * {@code Origin} and {@code Access-Control-Request-Method}) has no policy: the browser sends it on its
 * own before the request it announces, which is the one that spends the budget. Thread-safe.
 */
public final class RateLimitPolicyResolver {

	private final List<PathRule> rules;

	private final AnnotatedEndpoints annotatedEndpoints;

	/**
	 * Creates the resolver.
	 * @param rules the path rules, in configuration order
	 * @param annotatedEndpoints the annotated handlers
	 */
	public RateLimitPolicyResolver(List<PathRule> rules, AnnotatedEndpoints annotatedEndpoints) {
		this.rules = List.copyOf(rules);
		this.annotatedEndpoints = annotatedEndpoints;
	}

	/**
	 * Returns the path rules.
	 * @return the rules, in configuration order
	 */
	public List<PathRule> rules() {
		return this.rules;
	}

	/**
	 * Resolves the policies of a request.
	 * @param request the request
	 * @return the policies, each budget once; empty when the request is not limited (or a CORS preflight)
	 */
	public List<RateLimitPolicy> resolve(HttpServletRequest request) {
		if (CorsUtils.isPreFlightRequest(request)) {
			return List.of();
		}
		boolean parsedHere = !ServletRequestPathUtils.hasParsedRequestPath(request);
		RequestPath path = parsedHere ? ServletRequestPathUtils.parseAndCache(request)
				: ServletRequestPathUtils.getParsedRequestPath(request);
		try {
			List<RateLimitPolicy> result = new ArrayList<>(2);
			if (!this.rules.isEmpty()) {
				PathContainer within = path.pathWithinApplication();
				String method = request.getMethod();
				for (PathRule rule : this.rules) {
					if (rule.matches(method, within)) {
						rule.policies().forEach((policy) -> add(result, policy));
					}
				}
			}
			this.annotatedEndpoints.policiesFor(request).forEach((policy) -> add(result, policy));
			return result;
		}
		finally {
			if (parsedHere) {
				// The dispatcher parses the path itself; leave the request as it came.
				ServletRequestPathUtils.clearParsedRequestPath(request);
			}
		}
	}

	private static void add(List<RateLimitPolicy> result, RateLimitPolicy policy) {
		for (int i = 0; i < result.size(); i++) {
			if (result.get(i).id().equals(policy.id())) {
				result.set(i, policy);
				return;
			}
		}
		result.add(policy);
	}
}
