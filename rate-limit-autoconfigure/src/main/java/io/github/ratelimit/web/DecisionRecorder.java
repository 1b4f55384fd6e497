package io.github.ratelimit.web;

/**
 * Receives what the limiter decided, for metrics. The Micrometer implementation counts
 * {@code ratelimit.decisions} by policy and outcome and times the store; it never tags by key, whose
 * values are unbounded. Implementations must be thread-safe and fast.
 */
public interface DecisionRecorder {

	/** Records nothing. */
	DecisionRecorder NONE = new DecisionRecorder() {
	};

	/**
	 * Records one policy's outcome for one request.
	 * @param policy the policy's name
	 * @param outcome what it did
	 */
	default void decided(String policy, DecisionOutcome outcome) {
	}

	/**
	 * Records how long one call to the store took.
	 * @param nanos the duration
	 */
	default void storeCall(long nanos) {
	}
}
