package io.github.ratelimit.redis;

import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.Decision;
import io.github.ratelimit.core.Limit;
import io.github.ratelimit.core.Receipt;

/**
 * How one request was decided: by Redis (its script read {@code serverTime}, epoch microseconds; a
 * rejection kept in process has none), or by on-failure, which made its receipts.
 * @param decisions one per acquisition
 * @param serverTime the time the script read, when Redis decided
 * @param fallback the receipts on-failure made, {@code null} when Redis decided
 * @param bans per acquisition, what its ban did ({@link ReplyPart#bans}), or {@code null} when none applies
 */
record Outcome(List<Decision> decisions, long serverTime, @Nullable List<Receipt> fallback, int @Nullable [] bans) {

	Decision first() {
		return this.decisions.get(0);
	}

	/**
	 * The receipts of the request: on-failure's own, or Redis' with a mark per admitted acquisition; an
	 * allowed acquisition of a request another budget rejected holds nothing (all or nothing).
	 */
	List<Receipt> receipts(List<Acquisition> acquisitions) {
		if (this.fallback != null) {
			return this.fallback;
		}
		boolean allowed = this.decisions.stream().allMatch(Decision::isAllowed);
		List<Receipt> receipts = new ArrayList<>(acquisitions.size());
		for (int i = 0; i < acquisitions.size(); i++) {
			Acquisition acquisition = acquisitions.get(i);
			Decision decision = this.decisions.get(i);
			int ban = (this.bans != null) ? this.bans[i] : ReplyPart.NOT_BANNED;
			if (ban != ReplyPart.NOT_BANNED) {
				receipts.add(new Receipt(acquisition, decision,
						(ban == ReplyPart.BAN_STARTED) ? Receipt.BAN_STARTED : Receipt.NO_MARK, Receipt.Place.BANNED));
				continue;
			}
			receipts.add(!decision.isAllowed() ? new Receipt(acquisition, decision, Receipt.NO_MARK, Receipt.Place.STORE)
					: !allowed ? new Receipt(acquisition, decision, Receipt.NO_MARK, Receipt.Place.NOWHERE)
							: new Receipt(acquisition, decision, mark(acquisition, decision, this.serverTime), Receipt.Place.STORE));
		}
		return receipts;
	}

	/**
	 * Where an admitted acquisition took its cost, in the scripts' time (epoch microseconds), from its
	 * decision's reset and the time the script read: the tat it wrote (buckets), its window's end (fixed
	 * window), its entries' timestamp (log), its window's start (window counter; {@code reset} is
	 * {@code overlap + period} once the window counts anything).
	 * @param acquisition an admitted acquisition of a cost above zero
	 * @param decision Redis' decision on it
	 * @param now the time the script read
	 * @return the mark; {@link Receipt#NO_MARK} for a concurrency limit or a cost of zero
	 */
	static long mark(Acquisition acquisition, Decision decision, long now) {
		Limit limit = acquisition.limit();
		long reset = decision.resetNanos() / 1000;
		if (acquisition.cost() == 0) {
			return Receipt.NO_MARK;
		}
		return switch (limit.algorithm()) {
			case TOKEN_BUCKET, LEAKY_BUCKET, FIXED_WINDOW -> now + reset;
			case SLIDING_WINDOW_LOG -> now + reset - ScriptCodec.micros(limit.period().toNanos());
			case SLIDING_WINDOW_COUNTER -> now + reset - 2 * ScriptCodec.micros(limit.period().toNanos());
			case CONCURRENCY -> Receipt.NO_MARK;
		};
	}
}
