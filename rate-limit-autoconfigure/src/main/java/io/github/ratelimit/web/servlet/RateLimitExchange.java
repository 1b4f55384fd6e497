package io.github.ratelimit.web.servlet;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

import io.github.ratelimit.web.CountMode;
import io.github.ratelimit.web.key.UnreadableRequestException;
import io.github.ratelimit.web.limiter.Check;
import io.github.ratelimit.web.limiter.Problems;
import io.github.ratelimit.web.limiter.RequestChecks;
import io.github.ratelimit.web.limiter.RequestDecision;
import io.github.ratelimit.web.limiter.RequestLimiter;
import io.github.ratelimit.web.policy.RateLimitPolicy;
import io.github.ratelimit.web.policy.RateLimitPolicyResolver;

/**
 * One request's rate limiting from its arrival to its end, in phases that only move forward:
 * <ol>
 * <li>{@link Phase#OPENED}: the {@link RateLimitFilter} opened it on the request's first dispatch;</li>
 * <li>{@link Phase#RULES_DECIDED}: its path rules were decided before the rest of the filter chain ran
 * ({@link #start}), so that a later filter (Spring Security's login) never answers a client out of
 * guesses;</li>
 * <li>{@link Phase#DECIDED}: every policy that applies was decided, by the {@link RateLimitInterceptor} once
 * Spring MVC found the handler ({@link #decideHandler}), or by the filter when no handler was looked up
 * ({@link #end}), in one store call on the request's thread (a Server MVC gateway route's own policies are
 * decided after them, as its handler runs: {@link #decideRoute}). An allowed request then takes its
 * turn: now, or once its wait is over (delay mode);</li>
 * <li>completed: checks that count only some responses are settled once the status is known, then the
 * headers are final ({@link #complete});</li>
 * <li>released: the slots of concurrency limits are given back when the request ends, or when its async
 * processing does.</li>
 * </ol>
 * Each phase asks its services ({@link RateLimitPipeline}) and adds to one list of {@link Check checks}: a
 * policy decided in one phase is never decided again, and no phase calls back into an earlier one. Held as
 * a request attribute; used by one thread at a time (an async request is handed on by the container).
 */
final class RateLimitExchange {

	private static final String ATTRIBUTE = RateLimitExchange.class.getName();

	enum Phase {

		OPENED, RULES_DECIDED, DECIDED

	}

	private final RateLimitPipeline pipeline;

	private final HttpServletRequest request;

	/** The request as the limiter reads it, as this filter sees it. */
	private final ServletRequestView view;

	private final @Nullable HeldResponse held;

	private Phase phase = Phase.OPENED;

	private final RequestChecks checks;

	/**
	 * The policies decided in any phase (exempt ones too): the handler's and a gateway route's are decided after
	 * them, once.
	 */
	private final List<RateLimitPolicy> decided = new ArrayList<>(2);

	/** Whether the request may be parked for its turn: not once its handler runs (a gateway route's filter). */
	private boolean mayPark = true;

	/** Whether the limiter answered the request (a 429, a 400). */
	private boolean answered;

	/** The request's wait while it is parked for its turn, until the async dispatch that resumes it. */
	private volatile @Nullable ParkedTurn parked;

	private RateLimitExchange(RateLimitPipeline pipeline, HttpServletRequest request, HttpServletResponse response) {
		this.pipeline = pipeline;
		this.request = request;
		this.view = pipeline.view(request);
		this.checks = new RequestChecks(pipeline.limiter());
		this.held = pipeline.policies().mayCountLater() ? new HeldResponse(response, this::complete) : null;
	}

	static RateLimitExchange open(RateLimitPipeline pipeline, HttpServletRequest request, HttpServletResponse response) {
		RateLimitExchange exchange = new RateLimitExchange(pipeline, request, response);
		request.setAttribute(ATTRIBUTE, exchange);
		return exchange;
	}

	/** The request's exchange, if the filter opened one. */
	static @Nullable RateLimitExchange of(HttpServletRequest request) {
		return (request.getAttribute(ATTRIBUTE) instanceof RateLimitExchange exchange) ? exchange : null;
	}

	/** The exchange of a request on its first dispatch whose policies are not all decided yet. */
	static @Nullable RateLimitExchange undecided(HttpServletRequest request) {
		RateLimitExchange exchange = (request.getDispatcherType() == DispatcherType.REQUEST) ? of(request) : null;
		return (exchange != null && exchange.phase != Phase.DECIDED) ? exchange : null;
	}

	/** The response the rest of the chain writes to: held back while a count waits for its status. */
	HttpServletResponse response(HttpServletResponse response) {
		return (this.held != null) ? this.held : response;
	}

	/**
	 * Before the rest of the filter chain: decides the path rules of a request that no handler lookup
	 * will decide (it goes to another servlet), of every request when the filter runs ahead of Spring
	 * Security's, and of a request whose rules count failures or successes (a later filter may answer it).
	 * @param toSpringMvc whether the request goes to a Spring MVC dispatcher
	 * @param response the response the chain writes to
	 * @return whether the request proceeds now: not when refused, nor when parked for its turn
	 */
	boolean start(boolean toSpringMvc, HttpServletResponse response) throws IOException {
		RateLimitPolicyResolver policies = this.pipeline.policies();
		if (!toSpringMvc) {
			return decide(this.view, this.request, policies.resolve(this.view, null), Phase.DECIDED, response);
		}
		if (!this.pipeline.rulesUpFront() && !policies.rulesMayCountLater()) {
			return true;
		}
		List<RateLimitPolicy> rules = policies.resolve(this.view, null);
		if (!this.pipeline.rulesUpFront() && rules.stream().allMatch((rule) -> rule.count() == CountMode.ALL)) {
			return true;
		}
		return decide(this.view, this.request, rules, Phase.RULES_DECIDED, response);
	}

	/**
	 * Once Spring MVC has looked up the handler: decides the policies of the request that were not decided
	 * up front (all of them, or only the handler's when its path rules were), on the request as Spring MVC
	 * sees it (the filters after ours may have wrapped it: Spring Security's tells the user).
	 * @param request the request the dispatcher handles
	 * @param handler the handler, or {@code null} when the lookup failed (404, 405, ...)
	 * @param response the response
	 * @return whether the request proceeds now: not when refused, nor when parked for its turn (its resumed
	 * dispatch finds it decided and goes on)
	 */
	boolean decideHandler(HttpServletRequest request, @Nullable Object handler, HttpServletResponse response)
			throws IOException {
		RateLimitPolicyResolver resolver = this.pipeline.policies();
		// Spring Security's wrapper tells the user: the request as the dispatcher sees it.
		ServletRequestView view = (request == this.request) ? this.view : this.pipeline.view(request);
		if (this.phase == Phase.OPENED) {
			return decide(view, request, resolver.resolve(view, handler), Phase.DECIDED, response);
		}
		return decide(view, request, notYetDecided(resolver.handlerPolicies(view, handler)), Phase.DECIDED, response);
	}

	/**
	 * While the handler runs: decides the policies a Spring Cloud Gateway Server MVC route names with its
	 * {@code RateLimited} filter, those not decided yet (a path rule may name one too), all or nothing with what
	 * was decided before: a rejection gives that back. A request that must wait for its turn waits on its thread.
	 * @param request the request the handler got
	 * @param policies the route's policies
	 * @param response the response
	 * @return whether the request proceeds: not when refused
	 */
	boolean decideRoute(HttpServletRequest request, List<RateLimitPolicy> policies, HttpServletResponse response)
			throws IOException {
		if (this.answered) {
			// Refused already (a Retry filter runs the route's filters again): refused again.
			return false;
		}
		// Its parameters as this filter saw them: the gateway's FormFilter hides a form's fields from the handler.
		ServletRequestView view = this.pipeline.view(request, this.request);
		if (view.isBrowsersPreflight()) {
			return true;
		}
		this.mayPark = false;
		boolean proceeds = decide(view, request, notYetDecided(policies), Phase.DECIDED, response);
		if (!proceeds) {
			// As if decided in one store call with the path rules: what they took goes back.
			this.checks.giveBackKept();
		}
		return proceeds;
	}

	/** The policies no earlier phase decided: a path rule may name one that the handler or the route names too. */
	private List<RateLimitPolicy> notYetDecided(List<RateLimitPolicy> policies) {
		return policies.stream()
			.filter((policy) -> this.decided.stream().noneMatch((done) -> done.id().equals(policy.id())))
			.toList();
	}

	/**
	 * Decides policies of the request: one store call, then the answer (the headers,
	 * or the rejection, after which what earlier phases admitted is given back), then the request's turn.
	 */
	private boolean decide(ServletRequestView view, HttpServletRequest request, List<RateLimitPolicy> policies,
			Phase next, HttpServletResponse response) throws IOException {
		this.phase = next;
		if (policies.isEmpty()) {
			return true;
		}
		this.decided.addAll(policies);
		List<Check> decided;
		try {
			decided = this.pipeline.limiter().decide(view, policies);
		}
		catch (UnreadableRequestException ex) {
			return !refuse(view, request, ex, policies, response);
		}
		return answer(request, decided, response) && takeTurn(decided, request, response);
	}

	/**
	 * Answers a decided step: the rejection, or the headers (which wait while a check waits for its count).
	 * @return whether the request was allowed
	 */
	private boolean answer(HttpServletRequest request, List<Check> step, HttpServletResponse response)
			throws IOException {
		RequestDecision result = this.checks.add(step);
		if (!result.isAllowed()) {
			reject(request, result, response);
			return false;
		}
		if (this.checks.holdIfCountsLater() && this.held != null) {
			this.held.hold();
		}
		if (!this.checks.countsLater() && !step.isEmpty() && result.isLimited()) {
			this.pipeline.headers().write(result, new ServletHeaders(response));
		}
		return true;
	}

	/**
	 * Once the request's turn came: takes again the slots it gave back to wait. Refused (its concurrency
	 * limits are full now), it gives back what it took, as a request rejected in one store call would,
	 * and gets its 429.
	 * @param request the request as it goes on
	 * @param response the response the chain writes to
	 * @return whether the request proceeds
	 */
	boolean retakeSlots(HttpServletRequest request, HttpServletResponse response) throws IOException {
		RequestDecision refused = this.checks.retakeSlots();
		if (refused == null) {
			return true;
		}
		reject(request, refused, response);
		return false;
	}

	/** Answers a rejection: what earlier phases admitted is given back, then the headers and the 429. */
	private void reject(HttpServletRequest request, RequestDecision result, HttpServletResponse response)
			throws IOException {
		this.answered = true;
		this.checks.giveBackPending();
		this.pipeline.headers().write(result, new ServletHeaders(response));
		this.pipeline.rejections().reject(request, response, result);
	}

	/**
	 * Takes the turn of an allowed request: now, or after the longest wait of its enforced checks (delay mode),
	 * holding no slot of a concurrency limit meanwhile ({@link ParkedTurn}: parked without its thread when it
	 * may go async, then resumed by the filter, {@link #resume}).
	 * @param step the checks that made it wait: a request the container ends before its turn gives it back
	 * @return whether the request proceeds on this dispatch: not when refused, nor when parked
	 */
	private boolean takeTurn(List<Check> step, HttpServletRequest request, HttpServletResponse response)
			throws IOException {
		long waitNanos = RequestChecks.waitNanos(step);
		if (waitNanos == 0) {
			return true;
		}
		this.checks.releaseSlotsToWait();
		if (!this.mayPark || !this.pipeline.parking().parks() || !ParkedTurn.mayPark(this.request)) {
			ParkedTurn.waitOnThread(this.pipeline, waitNanos);
			return retakeSlots(request, response);
		}
		this.parked = ParkedTurn.park(this.request, waitNanos, step, this.pipeline, new AsyncEnd(this));
		return false;
	}

	/**
	 * On an async dispatch: resumes the parked request, once its turn came. It goes on as its first dispatch
	 * would have, every filter after ours included, seeing the returned view of the request, once it took
	 * again the slots it gave back to wait ({@link #retakeSlots}).
	 * @return the request as the filters after ours see it, or {@code null} when this dispatch resumes nothing
	 */
	ParkedTurn.@Nullable ResumedRequest resume(HttpServletRequest request) {
		ParkedTurn parked = this.parked;
		if (parked == null || !parked.isOver()) {
			return null;
		}
		this.parked = null;
		return new ParkedTurn.ResumedRequest(request);
	}

	/**
	 * After the rest of the filter chain (its first dispatch): decides, on path rules alone, a request no
	 * handler lookup decided (a later filter answered it; too late to reject or to wait, but it spends its
	 * budget); counts it unless it went async; and gives back its slots now, or when its async processing
	 * ends.
	 * @param response the response the chain wrote to
	 * @param failed whether the chain threw
	 */
	void end(HttpServletResponse response, boolean failed) throws IOException {
		boolean async = !failed && this.request.isAsyncStarted();
		try {
			if (this.phase == Phase.OPENED) {
				decideAnswered(response);
			}
			if (!async) {
				finish(response, failed);
			}
		}
		finally {
			if (!async || !releaseWhenAsyncEnds()) {
				this.checks.release();
			}
		}
	}

	private void decideAnswered(HttpServletResponse response) throws IOException {
		this.phase = Phase.DECIDED;
		List<RateLimitPolicy> rules = this.pipeline.policies().resolve(this.view, null);
		if (rules.isEmpty()) {
			return;
		}
		List<Check> step;
		try {
			step = this.pipeline.limiter().decide(this.view, rules);
		}
		catch (UnreadableRequestException ex) {
			// Answered already: too late for a 400, but counted as the refusal it would have been.
			refuse(this.view, this.request, ex, rules, null);
			return;
		}
		// Too late to wait for a turn; its body is written already: counted as the filter ends.
		RequestDecision result = this.checks.addAnswered(step);
		// A rejection comes too late to answer it: no Retry-After on a response that was served.
		if (!this.checks.countsLater() && result.isLimited() && result.isAllowed() && !response.isCommitted()) {
			this.pipeline.headers().write(result, new ServletHeaders(response));
		}
	}

	/** Whether the request still waits for its status to be counted (then its async dispatch counts it). */
	boolean countsLater() {
		return this.checks.countsLater();
	}

	/**
	 * Counts the request once its response is final, then lets a held body go.
	 * @param response the response
	 * @param failed whether it failed with an exception: no response shows it does not count, so it keeps its
	 * cost, unless a gateway's backend never answered it (an outage)
	 */
	void finish(HttpServletResponse response, boolean failed) throws IOException {
		if (failed) {
			boolean outage = this.pipeline.policies().isOutage(this.view, HttpServletResponse.SC_BAD_GATEWAY);
			complete(outage ? RequestLimiter.OUTAGE : RequestLimiter.NO_RESPONSE);
		}
		else {
			complete(response(response).getStatus());
		}
		if (this.held != null) {
			this.held.release();
		}
	}

	/**
	 * Settles the checks that count only some responses (once: an error sent counts it as it is sent),
	 * then writes the headers, when the response still takes them.
	 */
	private void complete(int status) {
		// A gateway's backend that never answered: neither a failure nor a success.
		boolean outage = status >= 0 && this.pipeline.policies().isOutage(this.view, status);
		RequestDecision counted = this.checks.complete(outage ? RequestLimiter.OUTAGE : status);
		if (counted != null && this.held != null && counted.isLimited() && !this.held.isCommitted()) {
			this.pipeline.headers().write(counted, new ServletHeaders(this.held));
		}
	}

	/**
	 * Answers a request whose key, plan or exemption cannot be told: {@code 400}, unless only shadow
	 * policies apply, which never change a response. The {@code 400 Bad Request} has {@code Cache-Control:
	 * no-store} and an RFC 9457 {@code application/problem+json} body, as the {@code 429}'s. Not the
	 * rejection handler's to write: that one answers requests over a limit, and an application's own handler
	 * may not expect anything else. The detail names the policy and the reason, never the client's input.
	 * @param response the response, {@code null} when it was answered already
	 * @return whether it was refused
	 */
	private boolean refuse(ServletRequestView view, HttpServletRequest request, UnreadableRequestException ex,
			List<RateLimitPolicy> policies, @Nullable HttpServletResponse response) throws IOException {
		if (!this.pipeline.limiter().refuses(ex, view, policies) || response == null) {
			return false;
		}
		// As for a 429: our answer, not the application's, so what earlier phases admitted is given back.
		this.answered = true;
		this.checks.giveBackPending();
		byte[] body = Problems.unreadable(request.getRequestURI(), ex);
		response.setStatus(HttpServletResponse.SC_BAD_REQUEST);
		response.setHeader("Cache-Control", "no-store");
		response.setContentType("application/problem+json");
		response.setContentLength(body.length);
		response.getOutputStream().write(body);
		return true;
	}

	/**
	 * Gives the slots back when the async processing completes, fails or times out: a client that went
	 * away may never cause another dispatch, but the container still completes the request.
	 * @return whether a listener will; {@code false} when the async processing completed meanwhile
	 */
	private boolean releaseWhenAsyncEnds() {
		if (this.parked != null || !this.checks.holdSlots()) {
			return true;
		}
		try {
			this.request.getAsyncContext().addListener(new AsyncEnd(this));
			return true;
		}
		catch (IllegalStateException ex) {
			return false;
		}
	}

	/** The container ended the request: a parked request gives its turn back, and any request its slots. */
	void ended() {
		ParkedTurn parked = this.parked;
		if (parked != null && parked.end()) {
			parked.giveBack();
		}
		this.checks.release();
	}
}
