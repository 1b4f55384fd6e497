package io.github.ratelimit.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

import io.github.ratelimit.core.RateLimitConfigurationException;

/**
 * Explains a start-up that failed on rate limit configuration: which property (or annotated method),
 * what is wrong, and what to do.
 */
class RateLimitConfigurationFailureAnalyzer extends AbstractFailureAnalyzer<RateLimitConfigurationException> {

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
