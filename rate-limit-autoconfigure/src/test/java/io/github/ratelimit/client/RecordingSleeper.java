package io.github.ratelimit.client;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A {@link Sleeper} that records the waits asked of it instead of sleeping. Thread-safe.
 */
final class RecordingSleeper implements Sleeper {

	private final List<Duration> sleeps = new CopyOnWriteArrayList<>();

	@Override
	public void sleep(Duration duration) {
		this.sleeps.add(duration);
	}

	List<Duration> sleeps() {
		return this.sleeps;
	}

	void clear() {
		this.sleeps.clear();
	}

}
