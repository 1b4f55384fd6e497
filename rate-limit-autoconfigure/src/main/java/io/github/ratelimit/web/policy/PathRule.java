package io.github.ratelimit.web.policy;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.springframework.http.server.PathContainer;
import org.springframework.web.util.pattern.PathPattern;

/**
 * A path rule from {@code rate-limit.rules}: the policies that apply to requests whose path (within
 * the application) matches a {@link PathPattern} and whose method is listed. Immutable.
 *
 * @param pattern the path pattern
 * @param methods upper-case HTTP methods; empty for all. {@code GET} covers {@code HEAD} too, as Spring MVC
 * serves a {@code HEAD} with the {@code GET} handler
 * @param policies the policies that apply
 */
public record PathRule(PathPattern pattern, Set<String> methods, List<RateLimitPolicy> policies) {

	public PathRule {
		Set<String> all = new HashSet<>(methods);
		if (methods.contains("GET")) {
			all.add("HEAD");
		}
		methods = Set.copyOf(all);
		policies = List.copyOf(policies);
	}

	boolean matches(String method, PathContainer path) {
		if (!this.methods.isEmpty() && !this.methods.contains(method)) {
			return false;
		}
		// A pattern without syntax (/api/hello) matches the path it spells: compared as text, as Spring MVC
		// looks up its direct paths; any other path (encoded, with parameters, ...) is matched in full.
		return (!this.pattern.hasPatternSyntax() && this.pattern.getPatternString().equals(path.value()))
				|| this.pattern.matches(path);
	}
}
