package io.github.ratelimit.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.LongAdder;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.Decision;
import io.github.ratelimit.core.Limit;
import io.github.ratelimit.core.Receipt;

/**
 * The send path: decides requests with one script call each (coalesced with others of their lane when the
 * client can), or a rejection kept in process, or on-failure when the node's breaker is open or the call
 * fails or is late; requests whose keys span slots one call after the other, all or nothing by
 * compensation (see the store's description). Thread-safe.
 */
final class Decider {

	private final ScriptRunner runner;

	private final ScriptCodec codec;

	private final RedisNodes nodes;

	private final Fallback fallback;

	private final Leases leases;

	private final GiveBacks giveBacks;

	private final RejectionCache rejections;

	private final Timeouts timeouts;

	private final long timeoutNanos;

	/** Coalesces decisions, when on (Lettuce only: see {@link ScriptRunner#canSend()}). */
	private final @Nullable Coalescer coalescer;

	/** Rejections answered from the rejection cache, without a call to Redis. */
	final LongAdder cachedRejections = new LongAdder();

	Decider(RedisSettings settings, ScriptRunner runner, ScriptCodec codec, RedisNodes nodes, Fallback fallback,
			Leases leases, GiveBacks giveBacks, RejectionCache rejections, Timeouts timeouts) {
		this.runner = runner;
		this.codec = codec;
		this.nodes = nodes;
		this.fallback = fallback;
		this.leases = leases;
		this.giveBacks = giveBacks;
		this.rejections = rejections;
		this.timeouts = timeouts;
		this.timeoutNanos = settings.timeoutNanos();
		this.coalescer = !settings.coalescing ? null : new Coalescer((requests) -> {
			ScriptCodec.Call call = codec.batch(requests);
			return runner.send(call.script(), call.keys(), call.args());
		}, this.timeoutNanos);
	}

	long deadline() {
		return System.nanoTime() + this.timeoutNanos;
	}

	/**
	 * Decides one request, all or nothing: a rejection Redis answered lately for a single acquisition, else
	 * Redis, else on-failure. An acquisition of a concurrency limit takes a lease, kept while allowed. The
	 * caller's thread waits for Redis until the deadline, and makes the outcome.
	 */
	Outcome decide(List<Acquisition> acquisitions, ScriptOp op, long deadline) {
		return decide(acquisitions, op, deadline, false).join();
	}

	/** {@link #decide(List, ScriptOp, long)} without blocking: the outcome is made when Redis answers, or fails. */
	CompletableFuture<Outcome> decideAsync(List<Acquisition> acquisitions, ScriptOp op, long deadline) {
		return decide(acquisitions, op, deadline, true);
	}

	private CompletableFuture<Outcome> decide(List<Acquisition> acquisitions, ScriptOp op, long deadline, boolean async) {
		// Never for a concurrency limit (RejectionCache#applies): its slots come back when requests end.
		// Nor for an acquisition that may ban: its rejections count towards the ban in Redis.
		boolean cacheable = op == ScriptOp.ACQUIRE && acquisitions.size() == 1 && this.rejections.applies(acquisitions.get(0))
				&& acquisitions.get(0).ban() == null;
		long sent = System.nanoTime();
		Decision cached = cacheable ? this.rejections.find(acquisitions.get(0), sent) : null;
		if (cached != null) {
			this.cachedRejections.increment();
			return CompletableFuture.completedFuture(new Outcome(List.of(cached), 0, null, null));
		}
		byte[][] keys = this.codec.keys(acquisitions);
		Leases.Lease[] leases = (op == ScriptOp.ACQUIRE) ? this.leases.take(acquisitions, keys) : null;
		return decide(acquisitions, op, deadline, keys, leases, async).thenApply((outcome) -> {
			boolean allowed = outcome.decisions().stream().allMatch(Decision::isAllowed);
			if (leases != null && !allowed) {
				this.leases.forget(acquisitions, leases);
			}
			if (cacheable && !allowed && outcome.fallback() == null) {
				this.rejections.put(acquisitions.get(0), outcome.first(), sent);
			}
			return outcome;
		});
	}

	/** Completed already when not {@code async}: the caller's thread waited. */
	private CompletableFuture<Outcome> decide(List<Acquisition> acquisitions, ScriptOp op, long deadline, byte[][] keys,
			Leases.Lease @Nullable [] leases, boolean async) {
		RedisNode node = this.nodes.node(keys[0]);
		if (!node.breaker().tryPass()) {
			return CompletableFuture.completedFuture(this.fallback.decide(acquisitions, op, leases));
		}
		// Only acquisitions charge: they carry a deadline in the node's time, and a late reply that shows
		// tokens taken anyway is given back. A late release or check is harmless.
		long serverDeadline = (op == ScriptOp.ACQUIRE) ? this.nodes.clock.deadline(node, deadline) : ServerClock.NONE;
		// Never coalesced with a concurrency limit: each acquisition carries its own lease.
		// Nor with a ban, which the batch formats do not carry.
		boolean coalesce = op == ScriptOp.ACQUIRE && leases == null && this.coalescer != null && this.runner.canSend()
				&& this.nodes.oneLane(keys) && !ScriptCodec.bans(acquisitions);
		Sent call = coalesce ? coalesced(node, acquisitions, keys, serverDeadline)
				: alone(node, op, acquisitions, keys, serverDeadline, leases, deadline);
		if (!async) {
			return CompletableFuture.completedFuture(outcome(node, acquisitions, op, leases, await(call, deadline)));
		}
		return reply(call, deadline).thenApply((reply) -> outcome(node, acquisitions, op, leases, reply));
	}

	/** Redis' outcome when it answered in time, else on-failure's. */
	private Outcome outcome(RedisNode node, List<Acquisition> acquisitions, ScriptOp op, Leases.Lease @Nullable [] leases,
			@Nullable ReplyPart reply) {
		if (reply != null && reply.isPastDeadline()) {
			this.nodes.onError(node, new TimeoutException("Redis ran the call after its deadline"));
			reply = null;
		}
		if (reply == null) {
			return this.fallback.decide(acquisitions, op, leases);
		}
		this.nodes.onAnswer(node);
		return new Outcome(reply.decisions(acquisitions), reply.serverTime(), null,
				(op == ScriptOp.ACQUIRE && ScriptCodec.bans(acquisitions)) ? reply.bans(acquisitions.size()) : null);
	}

	/** A call of the request's own. */
	private Sent alone(RedisNode node, ScriptOp op, List<Acquisition> acquisitions, byte[][] keys, long serverDeadline,
			Leases.Lease @Nullable [] leases, long deadline) {
		long sentAt = System.nanoTime();
		CompletableFuture<List<Long>> reply = call(op, acquisitions, keys, serverDeadline, leases, deadline);
		// An acquisition's late reply shows what to give back; a late release or check is cancelled, if still queued.
		Runnable giveUp = (op != ScriptOp.ACQUIRE) ? () -> reply.cancel(false)
				: () -> reply.thenAccept((late) -> this.giveBacks.readLate(node, serverDeadline, acquisitions, keys, leases,
						ReplyPart.of(late)));
		return new Sent(node, sentAt, reply.thenApply(ReplyPart::of), null, giveUp);
	}

	private CompletableFuture<List<Long>> call(ScriptOp op, List<Acquisition> acquisitions, byte[][] keys,
			long serverDeadline, Leases.Lease @Nullable [] leases, long deadline) {
		try {
			ScriptCodec.Call call = this.codec.call(op, acquisitions, keys, ScriptCodec.deadlineArg(serverDeadline), leases);
			return this.runner.call(call.script(), call.keys(), call.args(), deadline);
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	/**
	 * Decides with the next call of the key's lane (see {@link Coalescer}): at once when the lane is idle. Its
	 * failure is counted once per call, by the first of its requests to see it.
	 */
	private Sent coalesced(RedisNode node, List<Acquisition> acquisitions, byte[][] keys, long serverDeadline) {
		// The deadline's argument is written here, on the caller's thread, not on the client's one that sends batches.
		Coalescer.Pending pending = new Coalescer.Pending(acquisitions, keys, serverDeadline, Receipt.NO_MARK);
		Sent sent = new Sent(node, System.nanoTime(), pending.reply, pending, () -> {
			pending.abandoned = true;
			pending.reply.thenAccept((late) -> this.giveBacks.readLate(node, serverDeadline, acquisitions, keys, null, late));
		});
		this.coalescer.submit(this.nodes.lane(keys[0]), pending);
		return sent;
	}

	/**
	 * A script call on its way, waited for until a deadline: by the caller's thread ({@link #await}), or without
	 * blocking ({@link #reply}). Either way a reply teaches the node's clock, and a failure or a reply too late
	 * gives up on it and counts once.
	 * @param sentAt when it was sent, or before: a reply bounds the node's clock from it
	 * @param pending its coalesced request; {@code null} for a call of its own
	 * @param giveUp what giving up on the reply does: a late reply is read, or the call cancelled
	 */
	private record Sent(RedisNode node, long sentAt, CompletableFuture<ReplyPart> reply, Coalescer.@Nullable Pending pending,
			Runnable giveUp) {
	}

	private @Nullable ReplyPart await(Sent call, long deadline) {
		try {
			return answered(call, call.reply().get(ScriptRunner.remaining(deadline), TimeUnit.NANOSECONDS));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return failed(call, ex);
		}
		catch (ExecutionException ex) {
			return failed(call, ex.getCause());
		}
		catch (TimeoutException ex) {
			return failed(call, ex);
		}
	}

	private CompletableFuture<@Nullable ReplyPart> reply(Sent call, long deadline) {
		long remaining = deadline - System.nanoTime();
		if (remaining <= 0 && !call.reply().isDone()) {
			return CompletableFuture.completedFuture(failed(call, new TimeoutException("Redis did not answer in time")));
		}
		// A copy times out, not the reply itself: a late reply must still be read.
		return this.timeouts.orTimeout(call.reply().copy(), remaining)
			.handle((reply, failure) -> (failure == null) ? answered(call, reply)
					: failed(call, (failure instanceof CompletionException && failure.getCause() != null) ? failure.getCause()
							: failure));
	}

	private ReplyPart answered(Sent call, ReplyPart reply) {
		this.nodes.clock.learn(call.node(), call.sentAt(), reply);
		return reply;
	}

	private @Nullable ReplyPart failed(Sent call, Throwable failure) {
		if (failure instanceof TimeoutException || failure instanceof InterruptedException) {
			call.giveUp().run();
		}
		// Never sent (its lane was busy: no batch), or its call's failure is counted by another request.
		if (call.pending() == null || call.pending().countsFailure()) {
			this.nodes.onError(call.node(), (failure instanceof Exception ex) ? ex : new IllegalStateException(failure));
		}
		return null;
	}

	/**
	 * Gives back an acquisition: a rate's tokens by a release script call; a slot where it was taken, its
	 * lease in Redis (a failure leaves it to expire), the local store (on-failure: local), or nowhere
	 * (on-failure allowed it without a slot).
	 */
	Decision release(Acquisition acquisition, long deadline) {
		return releaseAsync(acquisition, deadline).join();
	}

	private CompletableFuture<Decision> releaseAsync(Acquisition acquisition, long deadline) {
		List<Acquisition> one = List.of(acquisition);
		if (!Leases.isConcurrency(acquisition)) {
			this.rejections.drop(acquisition.limitId(), acquisition.key());
			return decideAsync(one, ScriptOp.RELEASE, deadline).thenApply(Outcome::first);
		}
		Leases.Lease lease = this.leases.remove(acquisition);
		Limit limit = acquisition.limit();
		if (lease == null || lease.where == Receipt.Place.NOWHERE) {
			return CompletableFuture.completedFuture(Decision.allowed(limit.limit(), limit.limit(), 0, 0));
		}
		if (lease.where == Receipt.Place.LOCAL) {
			return CompletableFuture.completedFuture(this.fallback.localStore.release(acquisition));
		}
		return decide(one, ScriptOp.RELEASE, deadline, this.codec.keys(one), new Leases.Lease[] { lease }, true)
			.thenApply(Outcome::first);
	}

	/** Says whether one call may decide all: one acquisition, Redis not a cluster, or keys of one slot. */
	private boolean oneCall(List<Acquisition> acquisitions) {
		return acquisitions.size() <= 1 || !this.nodes.clustered || this.nodes.oneLane(this.codec.keys(acquisitions));
	}

	/**
	 * Checks, or acquires all or nothing, several budgets: in one call when one may decide all, else one call
	 * per budget and, when an acquisition is rejected, a release of those taken. All wait at most the timeout.
	 */
	List<Decision> decideAll(List<Acquisition> acquisitions, ScriptOp op) {
		long deadline = deadline();
		if (oneCall(acquisitions)) {
			return decide(acquisitions, op, deadline).decisions();
		}
		List<Decision> decisions = new ArrayList<>(acquisitions.size());
		boolean refused = false;
		for (Acquisition acquisition : acquisitions) {
			Decision decision = decide(List.of(refused ? Fallback.withoutBan(acquisition) : acquisition), op, deadline).first();
			decisions.add(decision);
			refused |= !decision.isAllowed();
		}
		if (op == ScriptOp.ACQUIRE && !decisions.stream().allMatch(Decision::isAllowed)) {
			for (int i = 0; i < decisions.size(); i++) {
				if (decisions.get(i).isAllowed()) {
					decisions.set(i, release(acquisitions.get(i), deadline));
				}
			}
		}
		return decisions;
	}

	/**
	 * Admits several acquisitions, all or nothing, as {@link #decideAll} acquires them, with receipts (see
	 * {@link RedisRateLimitStore#admitAll}). The caller's thread waits.
	 */
	List<Receipt> admit(List<Acquisition> acquisitions) {
		if (oneCall(acquisitions)) {
			List<Receipt> receipts = decide(acquisitions, ScriptOp.ACQUIRE, deadline()).receipts(acquisitions);
			return this.fallback.mirrored(receipts, this::giveBackLater);
		}
		return admitAsync(acquisitions).join();
	}

	/**
	 * {@link #admit} without blocking. Across slots, one call after the other; what was taken before a
	 * rejection is given back by its receipt, awaited (until the deadline) before the step completes, and holds
	 * nothing afterwards.
	 */
	CompletableFuture<List<Receipt>> admitAsync(List<Acquisition> acquisitions) {
		long deadline = deadline();
		if (oneCall(acquisitions)) {
			return decideAsync(acquisitions, ScriptOp.ACQUIRE, deadline)
				.thenApply((outcome) -> this.fallback.mirrored(outcome.receipts(acquisitions), this::giveBackLater));
		}
		CompletableFuture<List<Receipt>> taken = CompletableFuture.completedFuture(new ArrayList<>(acquisitions.size()));
		for (Acquisition acquisition : acquisitions) {
			taken = taken.thenCompose((receipts) -> {
				// After a refusal no other budget's rejection counts towards its ban, as in one call.
				boolean refused = !receipts.stream().allMatch((receipt) -> receipt.decision().isAllowed());
				List<Acquisition> one = List.of(refused ? Fallback.withoutBan(acquisition) : acquisition);
				return decideAsync(one, ScriptOp.ACQUIRE, deadline).thenApply((outcome) -> {
					Receipt receipt = outcome.receipts(one).get(0);
					receipts.add((one.get(0) == acquisition) ? receipt
							: new Receipt(acquisition, receipt.decision(), receipt.mark(), receipt.place(), receipt.mirror()));
					return receipts;
				});
			});
		}
		return taken.thenCompose((receipts) -> allOrNothing(receipts, deadline))
			.thenApply((receipts) -> this.fallback.mirrored(receipts, this::giveBackLater));
	}

	/** Gives back what a refused request's receipts took, each awaited until the deadline. */
	private CompletableFuture<List<Receipt>> allOrNothing(List<Receipt> receipts, long deadline) {
		if (receipts.stream().allMatch((receipt) -> receipt.decision().isAllowed())) {
			return CompletableFuture.completedFuture(receipts);
		}
		Receipt[] settled = receipts.toArray(new Receipt[0]);
		List<CompletableFuture<?>> givenBack = new ArrayList<>(settled.length);
		for (int i = 0; i < settled.length; i++) {
			Receipt receipt = settled[i];
			if (receipt.holdsCost()) {
				int at = i;
				givenBack.add(giveBack(receipt, deadline, true).thenAccept((after) -> settled[at] = new Receipt(
						receipt.acquisition(), (after != null) ? after : receipt.decision(), Receipt.NO_MARK,
						Receipt.Place.NOWHERE)));
			}
		}
		return CompletableFuture.allOf(givenBack.toArray(new CompletableFuture<?>[0])).thenApply((done) -> List.of(settled));
	}

	/**
	 * Gives back without waiting for Redis (see {@link #giveBack(Receipt, long, boolean)}): a slot released in
	 * Redis is sent, as a give-back is, so that no thread waits here (an async step's completion may run this
	 * on the Redis client's own thread, which must never wait for a reply).
	 * @return the decision after the local store's give-back or release, else {@code null}
	 */
	@Nullable Decision giveBack(Receipt receipt) {
		CompletableFuture<@Nullable Decision> givenBack = giveBack(receipt, deadline(), false);
		return givenBack.isDone() ? givenBack.getNow(null) : null;
	}

	/** Gives back without waiting for anything. */
	private void giveBackLater(Receipt receipt) {
		giveBack(receipt, deadline(), false);
	}

	/**
	 * Gives back where the cost was taken: a slot by its release (a receipt gives one back only for a
	 * request refused after it was taken; its lease knows where), the local store's part (the local
	 * fallback, or the mirror), and Redis' part by a give-back call, awaited until {@code deadline} only
	 * when {@code await} (a rejected request's compensation, before it is answered).
	 * @return the decision after a release or the local store's give-back, else {@code null}
	 */
	private CompletableFuture<@Nullable Decision> giveBack(Receipt receipt, long deadline, boolean await) {
		Acquisition acquisition = receipt.acquisition();
		if (Leases.isConcurrency(acquisition)) {
			return receipt.holdsCost() ? releaseAsync(acquisition, deadline) : CompletableFuture.completedFuture(null);
		}
		if (receipt.mirror() != null) {
			this.fallback.localStore.giveBack(receipt.mirror());
		}
		if (receipt.place() == Receipt.Place.LOCAL) {
			return CompletableFuture.completedFuture(receipt.holdsCost() ? this.fallback.localStore
				.giveBack(new Receipt(acquisition, receipt.decision(), receipt.mark(), Receipt.Place.STORE)) : null);
		}
		CompletableFuture<Long> inRedis = this.giveBacks.inRedis(receipt);
		if (!await) {
			return CompletableFuture.completedFuture(null);
		}
		// Still on its way at the deadline (or lost): the attempt stays charged, never generous.
		return this.timeouts.completeOnTimeout(inRedis, -1L, deadline - System.nanoTime()).thenApply((givenBack) -> null);
	}
}
