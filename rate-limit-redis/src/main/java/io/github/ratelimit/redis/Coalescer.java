package io.github.ratelimit.redis;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.Receipt;

/**
 * Coalesces decisions: while {@link #MAX_IN_FLIGHT} script calls are in flight on a lane (the
 * connection; on Redis Cluster, one hash slot), requests that arrive for that lane wait and go together
 * in the next call, each still all or nothing on its own (the script decides them one after the other,
 * atomically). A request that finds fewer calls in flight is sent at once, so a request alone pays no
 * added latency; with two calls pipelined, Redis runs one batch while the client hands out the last
 * one's answers and gathers the next. A full lane none of whose calls was sent or answered for longer
 * than the timeout no longer holds new requests back, so calls that never return cannot stall it.
 * <p>
 * Thread-safety: each lane's queue and in-flight flag are guarded by the lane's monitor, held only
 * to enqueue or drain, never while calling Redis; replies are split and handed to each request's
 * future on the client's thread.
 */
final class Coalescer {

	/** Requests per script call at most: bounds the script's run time and the reply's size. */
	static final int MAX_BATCH = 64;

	/**
	 * Calls in flight per lane before requests wait: two keep Redis busy while the client works on the
	 * other (one left Redis idle during every round trip); more make batches smaller.
	 */
	static final int MAX_IN_FLIGHT = 2;

	private static final int MAX_LANES = 16_384;

	/** One request waiting for, or sent in, a coalesced call. */
	static final class Pending {

		final List<Acquisition> acquisitions;

		final byte[][] keys;

		final long serverDeadline;

		/** The deadline as the script's argument ({@code ''} for none). */
		final byte[] deadlineArg;

		/** A give-back's receipt mark (its one acquisition); {@link Receipt#NO_MARK} for a decision. */
		final long mark;

		/** The request's part of the reply (see {@link #split}). */
		final CompletableFuture<ReplyPart> reply = new CompletableFuture<>();

		volatile boolean abandoned;

		/** Shared by the requests of one script call once it is sent: its failure counts once (see {@link #countsFailure}). */
		volatile @Nullable AtomicBoolean failureCounted;

		/** Made on the caller's thread: so the deadline's argument is written there, not on the client's that sends batches. */
		Pending(List<Acquisition> acquisitions, byte[][] keys, long serverDeadline, long mark) {
			this.acquisitions = acquisitions;
			this.keys = keys;
			this.serverDeadline = serverDeadline;
			this.deadlineArg = ScriptCodec.deadlineArg(serverDeadline);
			this.mark = mark;
		}

		/**
		 * Says whether the caller is the first of its call's requests to report the call's failure.
		 * @return {@code true} once per call; {@code false} for a request never sent
		 */
		boolean countsFailure() {
			AtomicBoolean counted = this.failureCounted;
			return counted != null && counted.compareAndSet(false, true);
		}

	}

	private final Function<List<Pending>, @Nullable CompletableFuture<List<Long>>> send;

	private final long stallNanos;

	private final ConcurrentMap<Integer, Lane> lanes = new ConcurrentHashMap<>();

	/**
	 * Creates a coalescer.
	 * @param send sends one script call for the requests, or answers {@code null} when it cannot now
	 * @param stallNanos how long a full lane (no call sent or answered meanwhile) holds its new requests
	 * back, at most
	 */
	Coalescer(Function<List<Pending>, @Nullable CompletableFuture<List<Long>>> send, long stallNanos) {
		this.send = send;
		this.stallNanos = stallNanos;
	}

	/**
	 * Sends a request now, or with the next call of its lane.
	 * @param lane the lane: 0 for the connection, the hash slot on a cluster
	 * @param pending the request
	 */
	void submit(int lane, Pending pending) {
		Lane target = this.lanes.get(lane);
		if (target == null) {
			target = (this.lanes.size() < MAX_LANES) ? this.lanes.computeIfAbsent(lane, (l) -> new Lane()) : new Lane();
		}
		target.submit(pending);
	}

	private final class Lane {

		private final ArrayDeque<Pending> waiting = new ArrayDeque<>();

		private int inFlight;

		/** When a call of this lane was last sent or answered. */
		private long progressAt;

		void submit(Pending pending) {
			synchronized (this) {
				long now = System.nanoTime();
				if (this.inFlight >= MAX_IN_FLIGHT && now - this.progressAt < Coalescer.this.stallNanos) {
					this.waiting.add(pending);
					return;
				}
				this.inFlight++;
				this.progressAt = now;
			}
			dispatch(List.of(pending));
		}

		private void dispatch(List<Pending> requests) {
			AtomicBoolean failureCounted = new AtomicBoolean();
			requests.forEach((pending) -> pending.failureCounted = failureCounted);
			CompletableFuture<List<Long>> reply;
			try {
				reply = Coalescer.this.send.apply(requests);
			}
			catch (RuntimeException ex) {
				reply = CompletableFuture.failedFuture(ex);
			}
			if (reply == null) {
				reply = CompletableFuture.failedFuture(new IllegalStateException("Redis is not connected"));
			}
			reply.whenComplete((value, failure) -> {
				// The next call first: Redis works on it while this reply's requests are handed their parts.
				List<Pending> next = next();
				if (next != null) {
					dispatch(next);
				}
				if (failure != null) {
					requests.forEach((pending) -> pending.reply.completeExceptionally(failure));
				}
				else {
					split(requests, value);
				}
			});
		}

		/** The requests of the lane's next call, or {@code null} (one call fewer in flight) when none wait. */
		private @Nullable List<Pending> next() {
			List<Pending> requests = null;
			synchronized (this) {
				this.progressAt = System.nanoTime();
				while (!this.waiting.isEmpty() && (requests == null || requests.size() < MAX_BATCH)) {
					Pending pending = this.waiting.poll();
					if (!pending.abandoned) {
						if (requests == null) {
							requests = new ArrayList<>(Math.min(this.waiting.size() + 1, MAX_BATCH));
						}
						requests.add(pending);
					}
				}
				if (requests == null) {
					this.inFlight--;
				}
			}
			return requests;
		}

	}

	/**
	 * Hands each request its part of a reply, a view of one array of the reply's integers (no copy). A call
	 * of one request was sent in the plain format: its reply is the request's part, then the server time.
	 * A batch reply has per request {@code -1} (past its deadline), one compact integer ({@code >= 0}; for a
	 * give-back, what it gave back), or {@code -1 - n} and 8 integers per acquisition; then the server time.
	 */
	static void split(List<Pending> requests, List<Long> reply) {
		int size = reply.size();
		if (size == 0) {
			IllegalStateException odd = new IllegalStateException("Unexpected reply from a rate limit script: " + reply);
			requests.forEach((pending) -> pending.reply.completeExceptionally(odd));
			return;
		}
		if (requests.size() == 1) {
			requests.get(0).reply.complete(ReplyPart.of(reply));
			return;
		}
		long[] values = ReplyPart.of(reply).values();
		int end = size - 1;
		long now = values[end];
		int at = 0;
		for (Pending pending : requests) {
			long first = (at < end) ? values[at] : Long.MIN_VALUE;
			if (first >= -1) {
				pending.reply.complete(new ReplyPart(values, at, at + 1, now));
				at++;
				continue;
			}
			long n = -1 - first;
			if (n != pending.acquisitions.size() || at + 1 + 8 * n > end) {
				pending.reply.completeExceptionally(
						new IllegalStateException("Unexpected reply from a rate limit script: " + reply));
				at = end;
				continue;
			}
			pending.reply.complete(new ReplyPart(values, at + 1, at + 1 + (int) (8 * n), now));
			at += 1 + (int) (8 * n);
		}
	}
}
