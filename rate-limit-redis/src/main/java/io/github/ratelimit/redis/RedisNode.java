package io.github.ratelimit.redis;

import java.util.concurrent.atomic.LongAdder;

/**
 * One Redis endpoint as the store sees it (the server, or one Cluster master): its own breaker, so
 * that a dead master opens the breaker of its keys only, its own error count, and what the store
 * knows of its clock. Thread-safe.
 */
record RedisNode(String name, CircuitBreaker breaker, LongAdder errors, ServerClock clock) {
}
