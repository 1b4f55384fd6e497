package io.github.ratelimit.redis;

import java.util.concurrent.atomic.LongAdder;

/**
 * One Redis endpoint as the store sees it (the server, or one Cluster master): its own breaker, so
 * that a dead master opens the breaker of its keys only, its own error count, and what the store
 * knows of its clock. Thread-safe.
 */
final class RedisNode {

	private final String name;

	private final CircuitBreaker breaker;

	private final LongAdder errors = new LongAdder();

	private final ServerClock clock = new ServerClock();

	RedisNode(String name, CircuitBreaker breaker) {
		this.name = name;
		this.breaker = breaker;
	}

	/**
	 * Returns the node's name.
	 * @return {@code host:port}
	 */
	String name() {
		return this.name;
	}

	CircuitBreaker breaker() {
		return this.breaker;
	}

	ServerClock clock() {
		return this.clock;
	}

	long errors() {
		return this.errors.sum();
	}

	void countError() {
		this.errors.increment();
	}
}
