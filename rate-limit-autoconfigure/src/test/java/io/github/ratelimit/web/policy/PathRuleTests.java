package io.github.ratelimit.web.policy;

import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

import org.springframework.http.server.PathContainer;
import org.springframework.http.server.RequestPath;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link PathRule}: a pattern without syntax is compared as text first; whatever the path, the rule
 * matches exactly when its {@link PathPattern} does.
 */
class PathRuleTests {

	@Test
	void aRuleMatchesExactlyWhenItsPatternDoes() {
		List<String> paths = List.of("/api/hello", "/api/hello/", "/api/HELLO", "/api/hell%6F", "/api/hello;a=b",
				"/api//hello", "/api/hello/x", "/api", "/", "", "/api/hello%2F", "/api/h%20llo", "/api/h llo");
		for (String patternText : List.of("/api/hello", "/api/h llo", "/api/**", "/api/{name}", "/", "/api/hello/")) {
			PathPattern pattern = PathPatternParser.defaultInstance.parse(patternText);
			PathRule rule = new PathRule(pattern, Set.of("GET"), List.of());
			for (String path : paths) {
				PathContainer within = RequestPath.parse(path, "").pathWithinApplication();
				assertThat(rule.matches("GET", within)).as(patternText + " ~ " + path).isEqualTo(pattern.matches(within));
				assertThat(rule.matches("POST", within)).as("another method").isFalse();
			}
		}
		PathRule literal = new PathRule(PathPatternParser.defaultInstance.parse("/api/hello"), Set.of(), List.of());
		assertThat(literal.matches("DELETE", RequestPath.parse("/api/hello", "").pathWithinApplication())).isTrue();
		assertThat(literal.matches("GET", RequestPath.parse("/api/hell%6F", "").pathWithinApplication()))
			.as("an encoded spelling of the same path").isTrue();
	}
}
