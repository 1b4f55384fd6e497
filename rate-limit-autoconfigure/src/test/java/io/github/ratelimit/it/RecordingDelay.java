package io.github.ratelimit.it;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.ratelimit.web.RequestDelay;

/**
 * Records the waits it is asked for instead of sleeping.
 */
class RecordingDelay implements RequestDelay {

	final List<Long> waits = new CopyOnWriteArrayList<>();

	@Override
	public void await(long nanos) {
		this.waits.add(nanos);
	}

}
