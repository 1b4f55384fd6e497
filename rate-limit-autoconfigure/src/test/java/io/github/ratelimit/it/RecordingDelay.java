package io.github.ratelimit.it;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.web.RequestDelay;

/**
 * Records the waits it is asked for instead of waiting: a request resumes at once, or, while a gate is
 * set, once the test opens it.
 */
class RecordingDelay implements RequestDelay {

	final List<Long> waits = new CopyOnWriteArrayList<>();

	volatile CountDownLatch gate;

	@Override
	public void schedule(long nanos, Runnable resume) {
		this.waits.add(nanos);
		CountDownLatch gate = this.gate;
		if (gate == null) {
			resume.run();
			return;
		}
		Thread opener = new Thread(() -> {
			try {
				if (!gate.await(60, TimeUnit.SECONDS)) {
					throw new IllegalStateException("the test never opened the gate");
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			resume.run();
		}, "gate");
		opener.setDaemon(true);
		opener.start();
	}

}
