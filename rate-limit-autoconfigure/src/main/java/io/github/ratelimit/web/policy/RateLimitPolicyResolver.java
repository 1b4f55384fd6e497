package io.github.ratelimit.web.policy;

import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.http.server.PathContainer;

import io.github.ratelimit.web.CountMode;
import io.github.ratelimit.web.RateLimited;
import io.github.ratelimit.web.key.LimitedRequest;

/**
 * Finds every policy that applies to a request: those of matching path rules, then those its handler names
 * ({@link HandlerPolicies}: a {@link RateLimited} handler method, a gateway route). A policy named twice (by a
 * rule and by an annotation) counts once, with the annotation's cost (with the rule's when the rules were decided up
 * front, before the handler was known). A CORS preflight ({@code OPTIONS} with {@code Origin} and
 * {@code Access-Control-Request-Method}, without credentials) has no policy: the browser sends it on its
 * own before the request it announces, which is the one that spends the budget. Thread-safe.
 */
public final class RateLimitPolicyResolver {

	private final List<PathRule> rules;

	private final List<HandlerPolicies> handlers;

	private final boolean countsLater;

	/** Each rule's policies, each budget once (as {@link #add} keeps them): what a request matching only that rule gets. */
	private final List<List<RateLimitPolicy>> rulePolicies;

	/**
	 * Creates the resolver.
	 * @param rules the path rules, in configuration order
	 * @param handlers what handlers name (annotated handler methods, gateway routes)
	 */
	public RateLimitPolicyResolver(List<PathRule> rules, List<? extends HandlerPolicies> handlers) {
		this.rules = List.copyOf(rules);
		this.handlers = List.copyOf(handlers);
		this.countsLater = this.rules.stream()
			.flatMap((rule) -> rule.policies().stream())
			.anyMatch((policy) -> policy.count() != CountMode.ALL);
		this.rulePolicies = this.rules.stream()
			.map((rule) -> List.copyOf(addAll(new ArrayList<>(rule.policies().size()), rule.policies())))
			.toList();
	}

	/**
	 * Returns the path rules.
	 * @return the rules, in configuration order
	 */
	public List<PathRule> rules() {
		return this.rules;
	}

	/**
	 * Returns whether any policy applies to any request: some rule, or some handler's.
	 * @return {@code false} when nothing is limited
	 */
	public boolean limitsAnything() {
		if (!this.rules.isEmpty()) {
			return true;
		}
		for (int i = 0; i < this.handlers.size(); i++) {
			if (this.handlers.get(i).any()) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Returns whether some policy counts only some responses ({@code count: failures} or
	 * {@code successes}).
	 * @return {@code true} when a request may be counted once its response is known
	 */
	public boolean mayCountLater() {
		if (this.countsLater) {
			return true;
		}
		for (int i = 0; i < this.handlers.size(); i++) {
			if (this.handlers.get(i).countsLater()) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Returns whether some path rule's policy counts only some responses: then a request's rules may have
	 * to be decided before the rest of the filter chain.
	 * @return {@code true} when a rule may count a request once its response is known
	 */
	public boolean rulesMayCountLater() {
		return this.countsLater;
	}

	/**
	 * Resolves the policies of a request.
	 * @param request the request
	 * @param handler the handler Spring MVC found for it; {@code null} when none (path rules only)
	 * @return the policies, each budget once; empty when the request is not limited (or a CORS preflight)
	 */
	public List<RateLimitPolicy> resolve(LimitedRequest request, @Nullable Object handler) {
		if (request.isBrowsersPreflight()) {
			return List.of();
		}
		List<RateLimitPolicy> annotated = named(request, handler);
		if (this.rules.isEmpty()) {
			return annotated;
		}
		PathContainer within = request.pathWithinApplication();
		String method = request.method();
		// One matching rule and no annotation (the common case): that rule's list as it is, no copy.
		List<RateLimitPolicy> matched = List.of();
		List<RateLimitPolicy> merged = null;
		for (int i = 0; i < this.rules.size(); i++) {
			if (this.rules.get(i).matches(method, within)) {
				List<RateLimitPolicy> policies = this.rulePolicies.get(i);
				if (matched.isEmpty()) {
					matched = policies;
				}
				else {
					merged = addAll((merged != null) ? merged : new ArrayList<>(matched), policies);
				}
			}
		}
		if (!annotated.isEmpty()) {
			merged = addAll((merged != null) ? merged : new ArrayList<>(matched), annotated);
		}
		return (merged != null) ? merged : matched;
	}

	/**
	 * Returns the policies of a request's handler alone, for a request whose path rules were decided
	 * before the handler was known (on the path the filter saw).
	 * @param request the request
	 * @param handler its handler, or {@code null} when the lookup failed
	 * @return the handler's policies; none for a CORS preflight
	 */
	public List<RateLimitPolicy> handlerPolicies(LimitedRequest request, @Nullable Object handler) {
		return request.isBrowsersPreflight() ? List.of() : named(request, handler);
	}

	/**
	 * Returns whether a response's status says that the request's handler could not answer (a gateway's
	 * backend that is down): such a response is neither a failure nor a success.
	 * @param request the request
	 * @param status the response's status
	 * @return {@code true} for an outage
	 */
	public boolean isOutage(LimitedRequest request, int status) {
		for (int i = 0; i < this.handlers.size(); i++) {
			if (this.handlers.get(i).isOutage(request, status)) {
				return true;
			}
		}
		return false;
	}

	/** The policies the request's handler names, each budget once. */
	private List<RateLimitPolicy> named(LimitedRequest request, @Nullable Object handler) {
		if (this.handlers.size() == 1) {
			return this.handlers.get(0).policiesFor(request, handler);
		}
		List<RateLimitPolicy> named = List.of();
		for (int i = 0; i < this.handlers.size(); i++) {
			List<RateLimitPolicy> policies = this.handlers.get(i).policiesFor(request, handler);
			if (!policies.isEmpty()) {
				named = named.isEmpty() ? policies : addAll(new ArrayList<>(named), policies);
			}
		}
		return named;
	}

	private static List<RateLimitPolicy> addAll(List<RateLimitPolicy> result, List<RateLimitPolicy> policies) {
		for (int i = 0; i < policies.size(); i++) {
			add(result, policies.get(i));
		}
		return result;
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
