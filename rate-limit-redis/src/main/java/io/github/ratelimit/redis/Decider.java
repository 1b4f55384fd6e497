package io.github.ratelimit.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;

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

	private final long timeoutNanos;

	/** Coalesces decisions, when on (Lettuce only: see {@link ScriptRunner#canSend()}). */
	private final @Nullable Coalescer coalescer;

	/** Rejections answered from the rejection cache, without a call to Redis. */
	final LongAdder cachedRejections = new LongAdder();

	Decider(RedisSettings settings, ScriptRunner runner, ScriptCodec codec, RedisNodes nodes, Fallback fallback,
			Leases leases, GiveBacks giveBacks, RejectionCache rejections) {
		this.runner = runner;
		this.codec = codec;
		this.nodes = nodes;
		this.fallback = fallback;
		this.leases = leases;
		this.giveBacks = giveBacks;
		this.rejections = rejections;
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
	 * Redis, else on-failure. An acquisition of a concurrency limit takes a lease, kept while allowed.
	 */
	Outcome decide(List<Acquisition> acquisitions, ScriptOp op, long deadline) {
		// Never for a concurrency limit (RejectionCache#applies): its slots come back when requests end.
		// Nor for an acquisition that may ban: its rejections count towards the ban in Redis.
		boolean cacheable = op == ScriptOp.ACQUIRE && acquisitions.size() == 1 && this.rejections.applies(acquisitions.get(0))
				&& acquisitions.get(0).ban() == null;
		long sent = System.nanoTime();
		Decision cached = cacheable ? this.rejections.find(acquisitions.get(0), sent) : null;
		if (cached != null) {
			this.cachedRejections.increment();
			return new Outcome(List.of(cached), 0, null);
		}
		byte[][] keys = this.codec.keys(acquisitions);
		Leases.Lease[] leases = (op == ScriptOp.ACQUIRE) ? this.leases.take(acquisitions, keys) : null;
		Outcome outcome = decide(acquisitions, op, deadline, keys, leases);
		boolean allowed = outcome.decisions().stream().allMatch(Decision::isAllowed);
		if (leases != null && !allowed) {
			this.leases.forget(acquisitions, leases);
		}
		if (cacheable && !allowed && outcome.fallback() == null) {
			this.rejections.put(acquisitions.get(0), outcome.first(), sent);
		}
		return outcome;
	}

	private Outcome decide(List<Acquisition> acquisitions, ScriptOp op, long deadline, byte[][] keys,
			Leases.Lease @Nullable [] leases) {
		RedisNode node = this.nodes.node(keys[0]);
		// Only acquisitions charge: they carry a deadline in the node's time, and a late reply that shows
		// tokens taken anyway is given back. A late release or check is harmless.
		long serverDeadline = (op == ScriptOp.ACQUIRE) ? this.nodes.clock.deadline(node, deadline) : ServerClock.NONE;
		// Never coalesced with a concurrency limit: each acquisition carries its own lease.
		// Nor with a ban, which the batch formats do not carry.
		boolean coalesce = op == ScriptOp.ACQUIRE && leases == null && this.coalescer != null && this.runner.canSend()
				&& this.nodes.oneLane(keys) && !ScriptCodec.bans(acquisitions);
		ReplyPart reply = !node.breaker().tryPass() ? null
				: coalesce ? coalesced(node, acquisitions, keys, serverDeadline, deadline)
						: alone(node, op, acquisitions, keys, serverDeadline, leases, deadline);
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

	/** A call of the request's own; {@code null} when it failed (counted). */
	private @Nullable ReplyPart alone(RedisNode node, ScriptOp op, List<Acquisition> acquisitions, byte[][] keys,
			long serverDeadline, Leases.Lease @Nullable [] leases, long deadline) {
		Consumer<List<Long>> late = (op != ScriptOp.ACQUIRE) ? null
				: (reply) -> this.giveBacks.readLate(node, serverDeadline, acquisitions, keys, leases, ReplyPart.of(reply));
		try {
			return this.nodes.run(this.codec.call(op, acquisitions, keys, ScriptCodec.deadlineArg(serverDeadline), leases),
					node, deadline, late);
		}
		catch (Exception ex) {
			this.nodes.onError(node, ex);
			return null;
		}
	}

	/**
	 * Decides with the next call of the key's lane (see {@link Coalescer}): at once when the lane is idle;
	 * {@code null} when it failed, counted once per call by the first of its requests to see it.
	 */
	private @Nullable ReplyPart coalesced(RedisNode node, List<Acquisition> acquisitions, byte[][] keys,
			long serverDeadline, long deadline) {
		// The deadline's argument is written here, on the caller's thread, not on the client's one that sends batches.
		Coalescer.Pending pending = new Coalescer.Pending(acquisitions, keys, serverDeadline,
				ScriptCodec.deadlineArg(serverDeadline), Receipt.NO_MARK);
		long sent = System.nanoTime();
		this.coalescer.submit(this.nodes.lane(keys[0]), pending);
		Exception failure;
		try {
			ReplyPart reply = pending.reply.get(ScriptRunner.remaining(deadline), TimeUnit.NANOSECONDS);
			this.nodes.clock.learn(node, sent, reply);
			return reply;
		}
		catch (TimeoutException | InterruptedException ex) {
			pending.abandoned = true;
			pending.reply.thenAccept((late) -> this.giveBacks.readLate(node, serverDeadline, acquisitions, keys, null, late));
			failure = ex;
		}
		catch (ExecutionException ex) {
			failure = (ex.getCause() instanceof Exception cause) ? cause : ex;
		}
		// Never sent (its lane was busy: no batch), or its call's failure is counted by another request.
		if (pending.countsFailure()) {
			this.nodes.onError(node, failure);
		}
		else if (failure instanceof InterruptedException) {
			Thread.currentThread().interrupt();
		}
		return null;
	}

	/**
	 * Gives back an acquisition: a rate's tokens by a release script call; a slot where it was taken, its
	 * lease in Redis (a failure leaves it to expire), the local store (on-failure: local), or nowhere
	 * (on-failure allowed it without a slot).
	 */
	Decision release(Acquisition acquisition, long deadline) {
		List<Acquisition> one = List.of(acquisition);
		if (!Leases.isConcurrency(acquisition)) {
			this.rejections.drop(acquisition.limitId(), acquisition.key());
			return decide(one, ScriptOp.RELEASE, deadline).first();
		}
		Leases.Lease lease = this.leases.remove(acquisition);
		Limit limit = acquisition.limit();
		if (lease == null || lease.where == Receipt.Place.NOWHERE) {
			return Decision.allowed(limit.limit(), limit.limit(), 0, 0);
		}
		if (lease.where == Receipt.Place.LOCAL) {
			return this.fallback.localStore.release(acquisition);
		}
		return decide(one, ScriptOp.RELEASE, deadline, this.codec.keys(one), new Leases.Lease[] { lease }).first();
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
	 * {@link RedisRateLimitStore#admitAll}); across slots, what was taken before a rejection is given back by
	 * its receipt, awaited before the request is answered, and holds nothing afterwards.
	 */
	List<Receipt> admit(List<Acquisition> acquisitions) {
		long deadline = deadline();
		if (oneCall(acquisitions)) {
			return this.fallback.mirrored(decide(acquisitions, ScriptOp.ACQUIRE, deadline).receipts(acquisitions), this::giveBack);
		}
		List<Receipt> receipts = new ArrayList<>(acquisitions.size());
		boolean refused = false;
		for (Acquisition acquisition : acquisitions) {
			// After a refusal no other budget's rejection counts towards its ban, as in one call.
			List<Acquisition> one = List.of(refused ? Fallback.withoutBan(acquisition) : acquisition);
			Receipt receipt = decide(one, ScriptOp.ACQUIRE, deadline).receipts(one).get(0);
			receipts.add((one.get(0) == acquisition) ? receipt
					: new Receipt(acquisition, receipt.decision(), receipt.mark(), receipt.place(), receipt.mirror()));
			refused |= !receipt.decision().isAllowed();
		}
		if (!receipts.stream().allMatch((receipt) -> receipt.decision().isAllowed())) {
			for (int i = 0; i < receipts.size(); i++) {
				Receipt receipt = receipts.get(i);
				if (receipt.holdsCost()) {
					Decision after = giveBack(receipt, deadline, true);
					receipts.set(i, new Receipt(receipt.acquisition(), (after != null) ? after : receipt.decision(),
							Receipt.NO_MARK, Receipt.Place.NOWHERE));
				}
			}
		}
		return this.fallback.mirrored(receipts, this::giveBack);
	}

	void giveBack(Receipt receipt) {
		giveBack(receipt, deadline(), false);
	}

	/**
	 * Gives back where the cost was taken: a slot by its release (a receipt gives one back only for a
	 * request refused after it was taken; its lease knows where), the local store's part (the local
	 * fallback, or the mirror), and Redis' part by a give-back call, awaited until {@code deadline} only
	 * when {@code await} (a rejected request's compensation, before it is answered).
	 * @return the decision after a release or the local store's give-back, else {@code null}
	 */
	@Nullable Decision giveBack(Receipt receipt, long deadline, boolean await) {
		Acquisition acquisition = receipt.acquisition();
		if (Leases.isConcurrency(acquisition)) {
			return receipt.holdsCost() ? release(acquisition, deadline) : null;
		}
		if (receipt.mirror() != null) {
			this.fallback.localStore.giveBack(receipt.mirror());
		}
		if (receipt.place() == Receipt.Place.LOCAL) {
			return receipt.holdsCost() ? this.fallback.localStore
				.giveBack(new Receipt(acquisition, receipt.decision(), receipt.mark(), Receipt.Place.STORE)) : null;
		}
		CompletableFuture<Long> inRedis = this.giveBacks.inRedis(receipt);
		try {
			if (await) {
				inRedis.get(ScriptRunner.remaining(deadline), TimeUnit.NANOSECONDS);
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		catch (ExecutionException | TimeoutException ex) {
			// Still on its way (or lost: the attempt stays charged, never generous).
		}
		return null;
	}
}
