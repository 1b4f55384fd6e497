package io.github.ratelimit.web.servlet;

import java.util.ArrayList;
import java.util.List;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.Decision;
import io.github.ratelimit.core.Receipt;
import io.github.ratelimit.web.RateLimitResult;

/**
 * What the limits that apply to one request decided: one {@link Decision} per
 * {@link RateLimitPolicy}. The request is allowed only when every policy allows it. Immutable.
 */
final class RequestDecision implements RateLimitResult {

	private static final long NANOS_PER_SECOND = 1_000_000_000L;

	private final List<RateLimitPolicy> policies;

	private final List<Decision> decisions;

	private final boolean allowed;

	private final List<Deferred> deferred;

	private final long retryAfterSeconds;

	/** The longest wait of the decisions of an allowed request (delay mode); 0 when rejected. */
	private final long waitNanos;

	/** The slots of concurrency limits the request holds until its response is complete. */
	private final List<Acquisition> slots;

	/**
	 * Creates a result.
	 * @param policies the enforced policies that applied
	 * @param decisions their decisions, in the same order
	 */
	public RequestDecision(List<RateLimitPolicy> policies, List<Decision> decisions) {
		this(policies, decisions, List.of());
	}

	RequestDecision(List<RateLimitPolicy> policies, List<Decision> decisions, List<Deferred> deferred) {
		this(policies, decisions, deferred, List.of());
	}

	RequestDecision(List<RateLimitPolicy> policies, List<Decision> decisions, List<Deferred> deferred,
			List<Acquisition> slots) {
		if (policies.size() != decisions.size()) {
			throw new IllegalArgumentException("one decision per policy expected");
		}
		this.policies = List.copyOf(policies);
		this.decisions = List.copyOf(decisions);
		boolean allowed = true;
		long retryAfterNanos = 0;
		long waitNanos = 0;
		for (int i = 0; i < this.decisions.size(); i++) {
			Decision decision = this.decisions.get(i);
			allowed &= decision.isAllowed();
			waitNanos = Math.max(waitNanos, decision.waitNanos());
			retryAfterNanos = Math.max(retryAfterNanos, decision.retryAfterNanos());
			if (!decision.isAllowed()) {
				retryAfterNanos = Math.max(retryAfterNanos, decision.nextNanos());
			}
		}
		this.allowed = allowed;
		this.waitNanos = allowed ? waitNanos : 0;
		// Computed once: the header and the problem body both say it.
		this.retryAfterSeconds = allowed ? 0 : Math.max(1, seconds(retryAfterNanos));
		this.deferred = List.copyOf(deferred);
		this.slots = List.copyOf(slots);
	}

	/** A result with no enforced policy: the request proceeds untouched, without headers. */
	static RequestDecision unlimited() {
		return new RequestDecision(List.of(), List.of(), List.of());
	}

	RequestDecision withShadow(List<Deferred> shadowDeferred, List<Acquisition> shadowSlots) {
		if (shadowDeferred.isEmpty() && shadowSlots.isEmpty()) {
			return this;
		}
		List<Deferred> all = new ArrayList<>(this.deferred);
		all.addAll(shadowDeferred);
		List<Acquisition> slots = new ArrayList<>(this.slots);
		slots.addAll(shadowSlots);
		return new RequestDecision(this.policies, this.decisions, all, slots);
	}

	/**
	 * Joins this allowed result of a request's path rules, decided before its handler was known, and the
	 * result of its handler's own policies, decided later: one result for the headers, the rejection, the
	 * slots to give back and the count.
	 * @param handlers the result of the handler's policies
	 * @return both
	 */
	RequestDecision and(RequestDecision handlers) {
		if (handlers.policies.isEmpty() && handlers.deferred.isEmpty() && handlers.slots.isEmpty()) {
			return this;
		}
		List<RateLimitPolicy> policies = new ArrayList<>(this.policies);
		policies.addAll(handlers.policies);
		List<Decision> decisions = new ArrayList<>(this.decisions);
		decisions.addAll(handlers.decisions);
		List<Deferred> deferred = new ArrayList<>(this.deferred);
		deferred.addAll(handlers.deferred);
		List<Acquisition> slots = new ArrayList<>(this.slots);
		slots.addAll(handlers.slots);
		return new RequestDecision(policies, decisions, deferred, slots);
	}

	/**
	 * The slots of concurrency limits (enforced and shadow) this allowed request took: held until its
	 * response is complete, then given back ({@link RequestLimiter#release}).
	 */
	List<Acquisition> slots() {
		return this.slots;
	}

	/**
	 * Returns whether any enforced policy applied (then responses carry headers).
	 * @return {@code false} when only shadow policies applied, or the store failed
	 */
	public boolean isLimited() {
		return !this.policies.isEmpty();
	}

	List<Deferred> deferred() {
		return this.deferred;
	}

	@Override
	public boolean isAllowed() {
		return this.allowed;
	}

	/**
	 * Returns the policies that applied.
	 * @return the policies
	 */
	public List<RateLimitPolicy> policies() {
		return this.policies;
	}

	@Override
	public List<String> policyNames() {
		return this.policies.stream().map(RateLimitPolicy::name).toList();
	}

	@Override
	public List<Decision> decisions() {
		return this.decisions;
	}

	@Override
	public List<String> violatedPolicies() {
		List<String> names = new ArrayList<>();
		for (int i = 0; i < this.decisions.size(); i++) {
			if (!this.decisions.get(i).isAllowed()) {
				names.add(this.policies.get(i).name());
			}
		}
		return names;
	}

	@Override
	public long retryAfterSeconds() {
		return this.retryAfterSeconds;
	}

	/**
	 * Returns how long an allowed request must wait for its turn (delay mode): the longest wait of its
	 * limits.
	 * @return nanoseconds; 0 when it proceeds at once or was rejected
	 */
	public long waitNanos() {
		return this.waitNanos;
	}

	/**
	 * Returns the index of the most restrictive decision: the rejection with the longest wait, else
	 * the fewest remaining tokens (the later reset on a tie).
	 * @return an index into {@link #decisions()}
	 */
	public int mostRestrictive() {
		int best = 0;
		for (int i = 1; i < this.decisions.size(); i++) {
			Decision candidate = this.decisions.get(i);
			Decision current = this.decisions.get(best);
			if (moreRestrictive(candidate, current)) {
				best = i;
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

	/**
	 * An attempt of a policy that counts only some responses, admitted with its cost: settled once the
	 * response is known (given back when the response does not count).
	 * @param policy the policy
	 * @param receipt what its admission took, and where
	 */
	record Deferred(RateLimitPolicy policy, Receipt receipt) {
	}

	/**
	 * Converts nanoseconds to whole seconds, rounding up.
	 * @param nanos a duration in nanoseconds, zero or more
	 * @return seconds
	 */
	static long seconds(long nanos) {
		return (nanos / NANOS_PER_SECOND) + ((nanos % NANOS_PER_SECOND != 0) ? 1 : 0);
	}
}
