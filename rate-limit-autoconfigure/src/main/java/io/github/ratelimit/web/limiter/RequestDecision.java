package io.github.ratelimit.web.limiter;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import io.github.ratelimit.core.Decision;
import io.github.ratelimit.core.Receipt;
import io.github.ratelimit.web.RateLimitResult;

/**
 * What the enforced policies that apply to one request decided, one {@link Check} each: what the headers
 * and a rejection are rendered from. The request is allowed only when every policy allows it. Immutable.
 */
public final class RequestDecision implements RateLimitResult {

	private static final long NANOS_PER_SECOND = 1_000_000_000L;

	private final List<Check> checks;

	private final boolean allowed;

	private final long retryAfterSeconds;

	/** The longest wait of the decisions of an allowed request (delay mode); 0 when rejected. */
	private final long waitNanos;

	/**
	 * Creates a result.
	 * @param checks the request's checks; shadow ones are left out
	 */
	public RequestDecision(List<Check> checks) {
		List<Check> enforced = new ArrayList<>(checks.size());
		// Built here and never changed: kept as it is, not copied.
		boolean allowed = true;
		long retryAfterNanos = 0;
		long waitNanos = 0;
		for (Check check : checks) {
			if (check.enforced()) {
				enforced.add(check);
				Decision decision = check.decision();
				allowed &= decision.isAllowed();
				waitNanos = Math.max(waitNanos, decision.waitNanos());
				retryAfterNanos = Math.max(retryAfterNanos, decision.isAllowed() ? decision.retryAfterNanos()
						: Math.max(decision.retryAfterNanos(), decision.nextNanos()));
			}
		}
		this.checks = Collections.unmodifiableList(enforced);
		this.allowed = allowed;
		this.waitNanos = allowed ? waitNanos : 0;
		// Computed once: the header and the problem body both say it.
		this.retryAfterSeconds = allowed ? 0 : Math.max(1, seconds(retryAfterNanos));
	}

	/** The enforced checks, in the order the policies applied. */
	List<Check> checks() {
		return this.checks;
	}

	/** Whether any enforced policy applied (then responses carry headers). */
	public boolean isLimited() {
		return !this.checks.isEmpty();
	}

	@Override
	public boolean isAllowed() {
		return this.allowed;
	}

	@Override
	public List<String> policyNames() {
		return this.checks.stream().map((check) -> check.policy().name()).toList();
	}

	@Override
	public List<Decision> decisions() {
		return this.checks.stream().map(Check::decision).toList();
	}

	@Override
	public List<String> violatedPolicies() {
		return this.checks.stream().filter((check) -> !check.decision().isAllowed()).map((check) -> check.policy().name())
			.toList();
	}

	@Override
	public List<String> bannedPolicies() {
		return this.checks.stream().filter((check) -> check.receipt().place() == Receipt.Place.BANNED)
			.map((check) -> check.policy().name()).toList();
	}

	@Override
	public long retryAfterSeconds() {
		return this.retryAfterSeconds;
	}

	/** How long an allowed request waits for its turn (delay mode): 0 when it proceeds at once or was rejected. */
	public long waitNanos() {
		return this.waitNanos;
	}

	/** The most restrictive check: the rejection with the longest wait, else the fewest remaining (the later reset on a tie). */
	Check mostRestrictive() {
		Check best = this.checks.get(0);
		for (int i = 1; i < this.checks.size(); i++) {
			if (moreRestrictive(this.checks.get(i).decision(), best.decision())) {
				best = this.checks.get(i);
			}
		}
		return best;
	}

	private static boolean moreRestrictive(Decision candidate, Decision current) {
		if (candidate.isAllowed() != current.isAllowed()) {
			return !candidate.isAllowed();
		}
		if (!candidate.isAllowed()) {
			return candidate.retryAfterNanos() > current.retryAfterNanos();
		}
		if (candidate.remaining() != current.remaining()) {
			return candidate.remaining() < current.remaining();
		}
		return candidate.resetNanos() > current.resetNanos();
	}

	/** Whole seconds of a duration, rounded up. */
	static long seconds(long nanos) {
		return (nanos / NANOS_PER_SECOND) + ((nanos % NANOS_PER_SECOND != 0) ? 1 : 0);
	}
}
