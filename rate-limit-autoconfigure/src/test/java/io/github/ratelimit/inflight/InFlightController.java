package io.github.ratelimit.inflight;

import java.io.IOException;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

import jakarta.servlet.AsyncContext;
import jakarta.servlet.http.HttpServletRequest;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.context.request.async.DeferredResult;

/**
 * Slow handlers for concurrency limits: each {@code /inflight/slow*} request waits at the {@link Gate}
 * until the test opens it, so a test knows exactly how many requests are in flight without sleeping.
 * The policies come from the test's properties (path rules).
 */
@RestController
@RequestMapping("/inflight")
public class InFlightController {

	/** Where slow handlers wait; tests open it. */
	public static final Gate GATE = new Gate();

	@GetMapping({ "/slow", "/one-slow" })
	String slow() throws InterruptedException {
		GATE.pass();
		return "done";
	}

	/** A body larger than the container's buffer, written after the gate: its write fails when the client is gone. */
	@GetMapping("/big")
	String big() throws InterruptedException {
		GATE.pass();
		return "x".repeat(256 * 1024);
	}

	@GetMapping({ "/one", "/double" })
	String quick() {
		return "quick";
	}

	@GetMapping("/fail")
	String fail() {
		throw new IllegalStateException("the handler failed");
	}

	@GetMapping("/callable")
	Callable<String> callable() {
		return () -> {
			GATE.pass();
			return "called";
		};
	}

	/**
	 * Servlet async with no dispatch back: another thread writes the response and completes the async
	 * context, so the container never enters a filter again for this request (as for a client gone away).
	 */
	@GetMapping("/raw")
	void raw(HttpServletRequest request) {
		AsyncContext async = request.startAsync();
		async.setTimeout(30_000);
		new Thread(() -> {
			try {
				GATE.pass();
				async.getResponse().getWriter().write("raw");
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			catch (IOException ex) {
				// The client went away: nothing to write to.
			}
			finally {
				async.complete();
			}
		}).start();
	}

	@GetMapping("/deferred")
	DeferredResult<String> deferred() {
		// Never completed: times out (503) after 100 ms.
		return new DeferredResult<>(100L);
	}

	/** A gate slow handlers wait at, counting who arrived. Thread-safe. */
	public static final class Gate {

		private volatile CountDownLatch open = new CountDownLatch(1);

		private final Semaphore arrived = new Semaphore(0);

		void pass() throws InterruptedException {
			this.arrived.release();
			if (!this.open.await(30, TimeUnit.SECONDS)) {
				throw new IllegalStateException("the gate was never opened");
			}
		}

		/** Closes the gate and forgets who arrived. */
		public void close() {
			this.open = new CountDownLatch(1);
			this.arrived.drainPermits();
		}

		/** Lets every waiting (and later) request through. */
		public void open() {
			this.open.countDown();
		}

		/**
		 * Waits until {@code count} requests have arrived at the gate.
		 * @param count how many
		 * @return whether they did within 30 s
		 */
		public boolean awaitArrivals(int count) throws InterruptedException {
			if (!this.arrived.tryAcquire(count, 30, TimeUnit.SECONDS)) {
				return false;
			}
			this.arrived.release(count);
			return true;
		}

		/**
		 * Returns how many requests have arrived since the gate was closed.
		 * @return the count
		 */
		public int arrivals() {
			return this.arrived.availablePermits();
		}

	}
}
