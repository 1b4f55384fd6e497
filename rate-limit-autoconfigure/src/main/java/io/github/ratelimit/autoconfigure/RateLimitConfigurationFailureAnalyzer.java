package io.github.ratelimit.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.Ordered;

import io.github.ratelimit.core.RateLimitConfigurationException;

/**
 * Explains a start-up that failed on rate limit configuration: which property (or annotated method),
 * what is wrong, and what to do. Ahead of Spring Boot's analyzers, as a check made while the properties
 * are bound fails their binding too.
 */
class RateLimitConfigurationFailureAnalyzer extends AbstractFailureAnalyzer<RateLimitConfigurationException>
		implements Ordered {

	@Override
	public int getOrder() {
		return Ordered.HIGHEST_PRECEDENCE;
	}

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, RateLimitConfigurationException cause) {
		return new FailureAnalysis(
				sentence("Invalid rate limit configuration at " + cause.getOrigin() + ": " + cause.getProblem()),
				sentence(cause.getAction()), cause);
	}

	private static String sentence(String text) {
		return (text.endsWith(".") || text.endsWith("?") || text.endsWith("!")) ? text : text + ".";
	}
}
