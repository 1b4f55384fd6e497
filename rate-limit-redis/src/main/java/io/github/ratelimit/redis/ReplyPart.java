package io.github.ratelimit.redis;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.Decision;
import io.github.ratelimit.core.Limit;

/**
 * One request's part of a script reply, without copying it: {@code values[from, to)}, and the server time
 * the script read (epoch microseconds). The part is 8 integers per acquisition, one compact integer
 * (a single acquisition of a bucket, see {@code token-bucket.lua}), or {@code -1} alone when the script
 * ran past the request's deadline and changed nothing. Immutable once handed out (nobody writes
 * {@code values}).
 */
record ReplyPart(long[] values, int from, int to, long serverTime) {

	/**
	 * Reads a whole reply of a script call for one request: its part, then the server time.
	 * @param reply the reply's integers
	 * @return the part
	 * @throws IllegalStateException when the reply is empty
	 */
	static ReplyPart of(List<Long> reply) {
		int size = reply.size();
		if (size == 0) {
			throw new IllegalStateException("Unexpected reply from a rate limit script: " + reply);
		}
		long[] values = new long[size];
		for (int i = 0; i < size; i++) {
			values[i] = reply.get(i);
		}
		return new ReplyPart(values, 0, size - 1, values[size - 1]);
	}

	/** What a ban did to an acquisition ({@link #bans}): nothing. */
	static final int NOT_BANNED = 0;

	/** The acquisition's key is banned: its budget was not asked (driver.lua's allowed = 2). */
	static final int BANNED = 2;

	/** The acquisition's rejection has just banned its key (allowed = 3). */
	static final int BAN_STARTED = 3;

	/**
	 * Reads what bans did to the acquisitions of a call that may ban ({@code acquire-ban}).
	 * @param acquisitions how many acquisitions the request has
	 * @return per acquisition {@link #NOT_BANNED}, {@link #BANNED} or {@link #BAN_STARTED}
	 */
	int[] bans(int acquisitions) {
		int[] bans = new int[acquisitions];
		if (size() == 8 * acquisitions) {
			for (int i = 0; i < acquisitions; i++) {
				long allowed = get(8 * i);
				bans[i] = (allowed == BANNED || allowed == BAN_STARTED) ? (int) allowed : NOT_BANNED;
			}
		}
		return bans;
	}

	int size() {
		return this.to - this.from;
	}

	long get(int index) {
		return this.values[this.from + index];
	}

	/** Says whether the script ran after the request's deadline (and changed nothing). */
	boolean isPastDeadline() {
		return size() == 1 && get(0) == -1;
	}

	/**
	 * Says whether the part shows tokens taken: all or nothing, so the first decision tells.
	 * @param acquisitions how many acquisitions the request has
	 */
	boolean tookTokens(int acquisitions) {
		if (size() == 1 && acquisitions == 1) {
			// A compact decision: even when allowed (-1 is past the deadline).
			return get(0) >= 0 && (get(0) & 1) == 0;
		}
		return size() == 8 * acquisitions && get(0) == 1;
	}

	@Override
	public String toString() {
		return Arrays.toString(Arrays.copyOfRange(this.values, this.from, this.to)) + " at " + this.serverTime;
	}

	/** Reads the part's decisions: one compact integer, or 8 integers per acquisition. */
	List<Decision> decisions(List<Acquisition> acquisitions) {
		if (size() == 1 && acquisitions.size() == 1 && get(0) >= 0) {
			return List.of(compactDecision(acquisitions.get(0), get(0)));
		}
		if (size() != 8 * acquisitions.size()) {
			throw new IllegalStateException("Unexpected reply from a rate limit script: " + this);
		}
		List<Decision> decisions = new ArrayList<>(acquisitions.size());
		for (int i = 0; i < acquisitions.size(); i++) {
			long limit = acquisitions.get(i).limit().limit();
			int at = 8 * i;
			long remaining = get(at + 1);
			long reset = get(at + 2) * 1000;
			long retryAfter = get(at + 3) * 1000 + get(at + 5);
			long wait = get(at + 4) * 1000;
			long next = get(at + 6) * 1000 + get(at + 7);
			decisions.add((get(at) != 1) ? Decision.rejected(limit, remaining, reset, next, retryAfter)
					: (wait > 0) ? Decision.delayed(limit, remaining, reset, next, wait)
							: Decision.allowed(limit, remaining, reset, next));
		}
		return decisions;
	}

	/**
	 * Derives a bucket's decision from its compact reply, with the script's arithmetic (integer
	 * microseconds, then nanoseconds): {@code 2 * used} when allowed ({@code used = tat' - now}),
	 * {@code 2 * (base - now) + 1} when rejected ({@code base = max(tat, now)}); see {@code token-bucket.lua}
	 * and {@code leaky-bucket.lua}, whose {@code acquire} returns the same decision in 8 integers.
	 * @param acquisition the request's one acquisition
	 * @param compact the integer the script returned
	 * @return the decision
	 * @throws IllegalStateException when the algorithm has no compact reply
	 */
	static Decision compactDecision(Acquisition acquisition, long compact) {
		Limit limit = acquisition.limit();
		Algorithm algorithm = limit.algorithm();
		if (algorithm != Algorithm.TOKEN_BUCKET && algorithm != Algorithm.LEAKY_BUCKET) {
			throw new IllegalStateException("Unexpected compact reply " + compact + " for " + algorithm);
		}
		long interval = ScriptCodec.micros(limit.emissionIntervalNanos());
		long tolerance = interval * limit.burst();
		long cost = acquisition.cost();
		long maxWait = acquisition.maxWaitNanos() / 1000;
		long half = compact >> 1;
		if ((compact & 1) == 0) {
			long used = half;
			long reset = used * 1000;
			long next = untilNext(used, tolerance, interval) * 1000;
			if (algorithm == Algorithm.TOKEN_BUCKET) {
				long wait = used - tolerance;
				return (wait <= 0) ? Decision.allowed(limit.limit(), (tolerance - used) / interval, reset, next)
						// Reserved ahead (delay mode): the request proceeds once its tokens have refilled.
						: Decision.delayed(limit.limit(), 0, reset, next, wait * 1000);
			}
			long remaining = (tolerance - used) / interval;
			long turn = (maxWait > 0) ? used - cost * interval : 0;
			return (turn > 0) ? Decision.delayed(limit.limit(), remaining, reset, next, turn * 1000)
					: Decision.allowed(limit.limit(), remaining, reset, next);
		}
		long spent = half;
		long used = spent + cost * interval;
		long available = Math.max(0, (tolerance - spent) / interval);
		long retry = used - tolerance;
		if (algorithm == Algorithm.LEAKY_BUCKET) {
			retry = Math.max(retry, (maxWait > 0) ? spent - maxWait : 0);
		}
		long next = Math.min(untilNext(spent, tolerance, interval),
				(algorithm == Algorithm.LEAKY_BUCKET) ? Math.max(1, retry) : retry);
		return Decision.rejected(limit.limit(), available, spent * 1000, next * 1000, retry * 1000);
	}

	/** As {@code gcra_next} of prelude.lua (GcraState#untilNext) in microseconds. */
	private static long untilNext(long used, long tolerance, long interval) {
		if (used <= 0) {
			return 0;
		}
		long credit = tolerance - used;
		long available = Math.max(0, Math.floorDiv(credit, interval));
		return (available + 1) * interval - credit;
	}
}
