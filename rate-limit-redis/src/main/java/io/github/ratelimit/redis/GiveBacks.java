package io.github.ratelimit.redis;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.Receipt;

/**
 * Gives back, without blocking the caller, what Redis holds for a receipt ({@code give-back.lua}, coalesced
 * on lanes of their own as decisions are) and what a reply read after its caller gave up took (see
 * {@link #readLate}). A give-back that fails leaves the attempt charged, never generous. Clients whose calls
 * block (Jedis) send on one thread with a bounded queue: an outage must not pile up work. Thread-safe.
 */
final class GiveBacks {

	private final ScriptRunner runner;

	private final ScriptCodec codec;

	private final RedisNodes nodes;

	private final RejectionCache rejections;

	private final long timeoutNanos;

	/** Coalesces give-backs as decisions are, on lanes of their own, when on. */
	private final @Nullable Coalescer coalescer;

	private final ThreadPoolExecutor sender = new ThreadPoolExecutor(1, 1, 10, TimeUnit.SECONDS,
			new ArrayBlockingQueue<>(4096), (runnable) -> ScriptRunner.daemon(runnable, "rate-limit-redis-give-back"));

	/** Give-backs that did not reach Redis (a failed or late call, an open breaker): their attempts stay charged. */
	final LongAdder lost = new LongAdder();

	/** Replies read after their decision was made by on-failure, whatever they say. */
	final LongAdder lateRead = new LongAdder();

	/** Replies that came after their decision was made by on-failure, with tokens taken, and were given back. */
	final LongAdder lateReplies = new LongAdder();

	private final Timeouts timeouts;

	GiveBacks(RedisSettings settings, ScriptRunner runner, ScriptCodec codec, RedisNodes nodes, RejectionCache rejections,
			Timeouts timeouts) {
		this.timeouts = timeouts;
		this.runner = runner;
		this.codec = codec;
		this.nodes = nodes;
		this.rejections = rejections;
		this.timeoutNanos = settings.timeoutNanos();
		this.coalescer = !settings.coalescing ? null : new Coalescer((requests) -> send(codec.giveBacks(requests)), this.timeoutNanos);
	}

	/**
	 * Sends a give-back of a receipt of Redis' (see {@link RedisRateLimitStore#giveBack(Receipt)}).
	 * @param receipt any receipt
	 * @return completed with what the script gave back (tokens, or a bucket's microseconds) once Redis
	 * answered, with {@code 0} at once when nothing is held in Redis, with {@code -1} when the give-back
	 * did not reach Redis; never exceptionally
	 */
	CompletableFuture<Long> inRedis(Receipt receipt) {
		Acquisition acquisition = receipt.acquisition();
		if (!receipt.holdsCost() || receipt.place() != Receipt.Place.STORE || receipt.mark() == Receipt.NO_MARK
				|| acquisition.cost() == 0 || Leases.isConcurrency(acquisition)) {
			// Nothing held in Redis; a concurrency limit's slot comes back with its release.
			return CompletableFuture.completedFuture(0L);
		}
		this.rejections.drop(acquisition.limitId(), acquisition.key());
		List<Acquisition> acquisitions = List.of(acquisition);
		byte[][] keys = this.codec.keys(acquisitions);
		RedisNode node = this.nodes.node(keys[0]);
		if (!node.breaker().tryPass()) {
			this.lost.increment();
			RedisRateLimitStore.logger.debug("Redis rate limit store did not give back " + new String(keys[0], StandardCharsets.UTF_8)
					+ ": " + node.name() + " is failing; the attempt stays charged");
			return CompletableFuture.completedFuture(-1L);
		}
		Coalescer.Pending pending = new Coalescer.Pending(acquisitions, keys, ServerClock.NONE, receipt.mark());
		long sent = System.nanoTime();
		CompletableFuture<ReplyPart> reply = pending.reply;
		if (this.coalescer != null && this.runner.canSend()) {
			this.coalescer.submit(this.nodes.lane(keys[0]), pending);
		}
		else {
			// A call of its own: its failure counts.
			pending.failureCounted = new AtomicBoolean();
			reply = send(this.codec.giveBacks(List.of(pending))).thenApply(ReplyPart::of);
		}
		// Bounded as any call: a lost give-back is an error, the attempt stays charged.
		return this.timeouts.orTimeout(reply, this.timeoutNanos)
			.handle((part, failure) -> givenBack(node, pending, sent, part, failure));
	}

	/** Sends a call without blocking, or on the give-back thread (Jedis); never {@code null}. */
	private CompletableFuture<List<Long>> send(ScriptCodec.Call call) {
		// null when the client cannot send without blocking (Jedis, or Lettuce not connected yet)
		CompletableFuture<List<Long>> sent = this.runner.send(call.script(), call.keys(), call.args());
		if (sent != null) {
			return sent;
		}
		CompletableFuture<List<Long>> reply = new CompletableFuture<>();
		try {
			this.sender.execute(() -> {
				try {
					reply.complete(this.runner.run(call.script(), call.keys(), call.args(),
							System.nanoTime() + this.timeoutNanos));
				}
				catch (Exception ex) {
					if (ex instanceof InterruptedException) {
						Thread.currentThread().interrupt();
					}
					reply.completeExceptionally(ex);
				}
			});
		}
		catch (RejectedExecutionException ex) {
			reply.completeExceptionally(ex);
		}
		return reply;
	}

	/** A give-back's outcome, on the client's (or the timer's) thread. */
	private long givenBack(RedisNode node, Coalescer.Pending pending, long sent, @Nullable ReplyPart reply,
			@Nullable Throwable failure) {
		Acquisition acquisition = pending.acquisitions.get(0);
		if (failure == null && reply != null && reply.size() == 1) {
			this.nodes.clock.learn(node, sent, reply);
			this.nodes.onAnswer(node);
			// A rejection cached while the give-back was under way was answered before it ran.
			this.rejections.drop(acquisition.limitId(), acquisition.key());
			return reply.get(0);
		}
		Throwable cause = (failure == null) ? new IllegalStateException("Unexpected reply from a rate limit script: " + reply)
				: (failure instanceof CompletionException && failure.getCause() != null) ? failure.getCause() : failure;
		// Still waiting for its lane: never sent now.
		pending.abandoned = true;
		this.lost.increment();
		if (pending.countsFailure()) {
			// Once per call, as decisions count theirs; but not for the breaker, which spares request
			// threads the timeout of a Redis that is away: a give-back holds none, and a busy instance that
			// reads its replies late must not have its decisions sent to on-failure for that.
			this.nodes.countError(node);
		}
		if (RedisRateLimitStore.logger.isDebugEnabled()) {
			RedisRateLimitStore.logger.debug("Redis rate limit store could not give back "
					+ new String(pending.keys[0], StandardCharsets.UTF_8) + " on " + node.name() + "; the attempt stays charged", cause);
		}
		return -1;
	}

	/**
	 * A reply read after its caller gave up (and on-failure decided). When Redis ran the script before the
	 * acquisition's deadline, Redis answered in time and this instance read the answer late (too busy: a
	 * cold JVM, a GC pause, CPUs shared with a flood): that is no outage, so the node's breaker hears of an
	 * answer. When the script took tokens, they are given back, so that Redis keeps only what answered
	 * requests spent: exactly what the call took, by the receipts its reply makes (nothing of a window that
	 * has ended meanwhile, never another request's entry); a concurrency limit's slots by a release, queued
	 * for the give-back thread. Runs on the client's thread.
	 */
	void readLate(RedisNode node, long serverDeadline, List<Acquisition> acquisitions, byte[][] keys,
			Leases.Lease @Nullable [] leases, ReplyPart reply) {
		this.lateRead.increment();
		if (serverDeadline != ServerClock.NONE && !reply.isPastDeadline()) {
			this.nodes.onAnswer(node);
		}
		if (!reply.tookTokens(acquisitions.size())) {
			// Past its deadline, rejected (all or nothing: nothing is held), or an odd reply.
			return;
		}
		this.lateReplies.increment();
		if (leases == null) {
			new Outcome(reply.decisions(acquisitions), reply.serverTime(), null, null).receipts(acquisitions).forEach(this::inRedis);
			return;
		}
		ScriptCodec.Call release = this.codec.call(ScriptOp.RELEASE, acquisitions, keys, ScriptCodec.NO_DEADLINE, leases);
		send(release).whenComplete((done, failure) -> {
			if (failure != null) {
				RedisRateLimitStore.logger.debug("Redis rate limit store could not give back tokens a late reply from "
						+ node.name() + " took", failure);
			}
		});
	}

	void close() {
		this.sender.shutdown();
		try {
			this.sender.awaitTermination(this.timeoutNanos * 2, TimeUnit.NANOSECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}
}
