package io.github.ratelimit.core;

import java.util.Map;
import java.util.function.Consumer;

import org.jspecify.annotations.Nullable;

/**
 * Where the changes of policies made at run time are kept when several instances share one store (the
 * Redis store implements it), so that a change made on one instance reaches every instance and outlives
 * restarts. The values are opaque to the store: the rate limiter writes and reads them. A store that
 * does not implement this keeps changes in its own process. Implementations are thread-safe.
 */
public interface SharedPolicyOverrides {

	/**
	 * Stores the values a policy is changed to, or removes them, and tells every instance.
	 * @param policy the policy's name
	 * @param value the values, or {@code null} to remove the override
	 * @throws IllegalStateException when the store did not confirm the write in time (it may still land)
	 */
	void storeOverride(String policy, @Nullable String value);

	/**
	 * Calls {@code listener} with every override kept (policy name to value): at once, on the calling
	 * thread, when the store answers in time (an empty map when there is none), and again, on a background
	 * thread, each time they may have changed. While the store cannot be read, the listener is not called:
	 * the last values stay in force.
	 * @param listener receives every override in force
	 */
	void listenToOverrides(Consumer<Map<String, String>> listener);

	/**
	 * Tells whether the overrides a listener is being given are still current, asked by the listener while it
	 * holds its own lock (which this instance's {@link #storeOverride} is called under): a snapshot read before
	 * this instance's last write would put a policy back as it was. The store then reads again.
	 * @param overrides what the listener was given
	 * @return {@code false} when they were read before a write this instance made since; {@code true} by default
	 */
	default boolean isCurrent(Map<String, String> overrides) {
		return true;
	}
}
