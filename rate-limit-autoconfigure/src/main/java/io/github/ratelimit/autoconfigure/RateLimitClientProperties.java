package io.github.ratelimit.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Configuration of the client side, under {@code rate-limit.client.*}: how {@code RestClient} and
 * {@code RestTemplate} calls retry responses of rate-limited servers. Independent of the server side
 * ({@code rate-limit.enabled}).
 */
@ConfigurationProperties("rate-limit.client")
public class RateLimitClientProperties {

	/**
	 * Retries of 429 (and 503 with Retry-After) responses.
	 */
	private final Retry retry = new Retry();

	public Retry getRetry() {
		return this.retry;
	}

	/**
	 * Retries of 429 (and 503 with Retry-After) responses.
	 */
	public static class Retry {

		/**
		 * Whether RestClient.Builder and RestTemplateBuilder beans retry 429 (and 503 with
		 * Retry-After) responses.
		 */
		private boolean enabled;

		/**
		 * Most times a request is sent, the first time included; 1 retries nothing.
		 */
		private int maxAttempts = 3;

		/**
		 * Backoff before the first retry of a 429 without Retry-After, before jitter (x0.5 to x1.0);
		 * it doubles with each retry.
		 */
		private Duration baseDelay = Duration.ofMillis(100);

		/**
		 * Longest backoff before jitter; it does not cap a Retry-After.
		 */
		private Duration maxDelay = Duration.ofSeconds(2);

		/**
		 * Most time spent waiting over all retries of one call; a Retry-After longer than what is
		 * left returns the response at once instead of waiting.
		 */
		private Duration maxTotalWait = Duration.ofSeconds(5);

		/**
		 * HTTP methods whose requests are retried (case-insensitive), by default the idempotent GET,
		 * HEAD, OPTIONS, PUT, DELETE and TRACE; setting it replaces that list, so repeat them when
		 * adding POST or PATCH.
		 */
		private List<String> methods = new ArrayList<>(List.of("GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE"));

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public int getMaxAttempts() {
			return this.maxAttempts;
		}

		public void setMaxAttempts(int maxAttempts) {
			this.maxAttempts = maxAttempts;
		}

		public Duration getBaseDelay() {
			return this.baseDelay;
		}

		public void setBaseDelay(Duration baseDelay) {
			this.baseDelay = baseDelay;
		}

		public Duration getMaxDelay() {
			return this.maxDelay;
		}

		public void setMaxDelay(Duration maxDelay) {
			this.maxDelay = maxDelay;
		}

		public Duration getMaxTotalWait() {
			return this.maxTotalWait;
		}

		public void setMaxTotalWait(Duration maxTotalWait) {
			this.maxTotalWait = maxTotalWait;
		}

		public List<String> getMethods() {
			return this.methods;
		}

		public void setMethods(List<String> methods) {
			this.methods = methods;
		}

	}

}
