package io.github.ratelimit.it;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.web.RequestDelay;

/**
 * Records the waits it is asked for instead of sleeping; while a gate is set, holds the waiting
 * requests until the test opens it.
 */
class RecordingDelay implements RequestDelay {

	final List<Long> waits = new CopyOnWriteArrayList<>();

	volatile CountDownLatch gate;

	@Override
	public void await(long nanos) throws InterruptedException {
		this.waits.add(nanos);
		CountDownLatch gate = this.gate;
		if (gate != null && !gate.await(60, TimeUnit.SECONDS)) {
			throw new IllegalStateException("the test never opened the gate");
		}
	}

}
