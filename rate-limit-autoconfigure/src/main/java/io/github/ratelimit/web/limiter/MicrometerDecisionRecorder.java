package io.github.ratelimit.web.limiter;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

import io.github.ratelimit.web.DecisionOutcome;
import io.github.ratelimit.web.DecisionRecorder;

/**
 * Counts {@code ratelimit.decisions} tagged {@code policy} and {@code outcome} (a {@link DecisionOutcome}'s
 * tag) and times {@code ratelimit.store.latency}. Never tags by key:
 * keys are unbounded (client IPs), policy names are not. Thread-safe; meters are looked up once.
 */
public final class MicrometerDecisionRecorder implements DecisionRecorder {

	/** The decision counter. */
	static final String DECISIONS = "ratelimit.decisions";

	/** The store latency timer. */
	static final String STORE_LATENCY = "ratelimit.store.latency";

	private final MeterRegistry registry;

	private final ConcurrentMap<String, Counter[]> countersByPolicy = new ConcurrentHashMap<>();

	private final Timer storeLatency;

	/**
	 * Creates a recorder.
	 * @param registry where meters go
	 */
	public MicrometerDecisionRecorder(MeterRegistry registry) {
		this.registry = registry;
		this.storeLatency = Timer.builder(STORE_LATENCY)
			.description("Time the rate limit store took to decide")
			.register(registry);
	}

	@Override
	public void decided(String policy, DecisionOutcome outcome) {
		// One map read per decision, no key built: a policy's counters sit in an array by outcome.
		Counter[] counters = this.countersByPolicy.computeIfAbsent(policy,
				(name) -> new Counter[DecisionOutcome.values().length]);
		Counter counter = counters[outcome.ordinal()];
		if (counter == null) {
			counter = Counter.builder(DECISIONS)
				.description("Rate limit decisions, by policy and outcome")
				.tag("policy", policy)
				.tag("outcome", outcome.tag())
				.register(this.registry);
			// Racing threads register the same meter: the registry hands back one counter.
			counters[outcome.ordinal()] = counter;
		}
		counter.increment();
	}

	@Override
	public void storeCall(long nanos) {
		this.storeLatency.record(nanos, TimeUnit.NANOSECONDS);
	}
}
