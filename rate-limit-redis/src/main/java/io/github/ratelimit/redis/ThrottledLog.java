package io.github.ratelimit.redis;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * Lets a message of each kind be logged at most once per interval, and counts those held back, so
 * that an error Redis answers to every call (OOM under memory pressure) costs one line a minute, not
 * one per request. Kinds are Redis error codes; past {@value #MAX_KINDS} kinds, new ones share one
 * entry, so a server answering odd codes cannot grow the map. Thread-safe.
 */
final class ThrottledLog {

	static final int MAX_KINDS = 64;

	private static final String OTHER = "OTHER";

	private final long intervalNanos;

	private final LongSupplier nanoTime;

	private final ConcurrentMap<String, Entry> entries = new ConcurrentHashMap<>();

	ThrottledLog(long intervalNanos, LongSupplier nanoTime) {
		this.intervalNanos = intervalNanos;
		this.nanoTime = nanoTime;
	}

	/**
	 * Asks whether a message of this kind may be logged now.
	 * @param kind e.g. {@code OOM}
	 * @return -1 when not (it is counted as held back); else how many of this kind were held back since
	 * the last one logged
	 */
	long tryLog(String kind) {
		String key = (this.entries.containsKey(kind) || this.entries.size() < MAX_KINDS) ? kind : OTHER;
		Entry entry = this.entries.computeIfAbsent(key, (k) -> new Entry(new AtomicLong(Long.MIN_VALUE), new AtomicLong()));
		long now = this.nanoTime.getAsLong();
		long last = entry.lastLogged().get();
		if ((last != Long.MIN_VALUE && now - last < this.intervalNanos) || !entry.lastLogged().compareAndSet(last, now)) {
			entry.heldBack().incrementAndGet();
			return -1;
		}
		return entry.heldBack().getAndSet(0);
	}

	private record Entry(AtomicLong lastLogged, AtomicLong heldBack) {
	}
}
