package io.github.ratelimit.web.reactive;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;

import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilterChain;

import io.github.ratelimit.web.CountMode;
import io.github.ratelimit.web.ReactiveRateLimitRejectionHandler;
import io.github.ratelimit.web.key.UnreadableRequestException;
import io.github.ratelimit.web.limiter.Check;
import io.github.ratelimit.web.limiter.RequestChecks;
import io.github.ratelimit.web.limiter.RequestDecision;
import io.github.ratelimit.web.limiter.RequestLimiter;
import io.github.ratelimit.web.limiter.ResponseHeaders;
import io.github.ratelimit.web.policy.RateLimitPolicy;
import io.github.ratelimit.web.policy.RateLimitPolicyResolver;

/**
 * One WebFlux request's rate limiting, in the phases of the servlet side's exchange, without a blocking call:
 * <ol>
 * <li>opened by the {@link RateLimitWebFilter};</li>
 * <li>its path rules decided before the rest of the filter chain when the filter runs ahead of Spring
 * Security's, or when a rule counts failures or successes ({@link #start});</li>
 * <li>every policy that applies decided once WebFlux found the handler, by the {@link RateLimitHandlerAdapter}
 * ({@link #decideHandler}), or, when no handler was found (404, 405, ...), by the filter before the error is
 * answered, or after the chain when something else answered it; an allowed request then takes its turn: now,
 * or after a timer (delay mode, {@code slow-down}) that holds no thread;</li>
 * <li>counted once the status is known, just before the response is committed, so that the headers say
 * what the count left;</li>
 * <li>released: the slots of concurrency limits are given back when the exchange ends, however it ends.</li>
 * </ol>
 * The books are {@link RequestChecks}, as on the servlet side. Held as an exchange attribute.
 */
final class ReactiveRateLimitExchange {

	private static final String ATTRIBUTE = ReactiveRateLimitExchange.class.getName();

	private static final Mono<Boolean> PROCEED = Mono.just(true);

	private static final Mono<Boolean> STOP = Mono.just(false);

	enum Phase {

		OPENED, RULES_DECIDED, DECIDED

	}

	private final ReactivePipeline pipeline;

	private final ServerWebExchange exchange;

	private final RequestChecks checks;

	private volatile Phase phase = Phase.OPENED;

	/** The policies decided before the handler was known (exempt ones too): decided once. */
	private List<RateLimitPolicy> decidedUpFront = List.of();

	private ReactiveRateLimitExchange(ReactivePipeline pipeline, ServerWebExchange exchange) {
		this.pipeline = pipeline;
		this.exchange = exchange;
		this.checks = new RequestChecks(pipeline.limiter());
	}

	static ReactiveRateLimitExchange open(ReactivePipeline pipeline, ServerWebExchange exchange) {
		ReactiveRateLimitExchange opened = new ReactiveRateLimitExchange(pipeline, exchange);
		exchange.getAttributes().put(ATTRIBUTE, opened);
		return opened;
	}

	/** The exchange's rate limiting whose policies are not all decided yet, if the filter opened one. */
	static @Nullable ReactiveRateLimitExchange undecided(ServerWebExchange exchange) {
		ReactiveRateLimitExchange opened = exchange.getAttribute(ATTRIBUTE);
		return (opened != null && opened.phase != Phase.DECIDED) ? opened : null;
	}

	/** The whole request: its start, the rest of the chain, its end, and its release however it ends. */
	Mono<Void> filter(WebFilterChain chain) {
		return start().flatMap((proceeds) -> proceeds
				? chain.filter(this.exchange).onErrorResume(this::answeredWithError).then(Mono.defer(this::end))
				: Mono.<Void>empty())
			.doFinally(this::ended);
	}

	/**
	 * Before the rest of the filter chain: decides the path rules of every request when the filter runs ahead
	 * of Spring Security's, and of a request whose rules count failures or successes.
	 */
	private Mono<Boolean> start() {
		RateLimitPolicyResolver policies = this.pipeline.policies();
		if (!this.pipeline.rulesUpFront() && !policies.rulesMayCountLater()) {
			return PROCEED;
		}
		ExchangeRequestView view = this.pipeline.view(this.exchange);
		List<RateLimitPolicy> rules = policies.resolve(view, null);
		if (!this.pipeline.rulesUpFront() && rules.stream().allMatch((rule) -> rule.count() == CountMode.ALL)) {
			return PROCEED;
		}
		this.decidedUpFront = rules;
		return decide(view, rules, Phase.RULES_DECIDED);
	}

	/**
	 * Once WebFlux found the handler: decides the policies not decided up front (all of them, or only the
	 * handler's), on the exchange as the handler gets it (Spring Security's tells the user).
	 * @param current the exchange the handler gets
	 * @param handler the handler
	 * @return whether the request proceeds to its handler: not when answered
	 */
	Mono<Boolean> decideHandler(ServerWebExchange current, Object handler) {
		RateLimitPolicyResolver resolver = this.pipeline.policies();
		ExchangeRequestView view = this.pipeline.view(current);
		if (this.phase == Phase.OPENED) {
			return decide(view, resolver.resolve(view, handler), Phase.DECIDED);
		}
		List<RateLimitPolicy> policies = resolver.handlerPolicies(view, handler).stream()
			.filter((policy) -> this.decidedUpFront.stream().noneMatch((rule) -> rule.id().equals(policy.id())))
			.toList();
		return decide(view, policies, Phase.DECIDED);
	}

	/** Decides policies of the request in one store step, then answers, then takes the request's turn. */
	private Mono<Boolean> decide(ExchangeRequestView view, List<RateLimitPolicy> policies, Phase next) {
		this.phase = next;
		if (policies.isEmpty()) {
			return PROCEED;
		}
		boolean readsParameters = policies.stream().anyMatch(RateLimitPolicy::readsParameters);
		return view.prepared(readsParameters)
			.flatMap((prepared) -> this.pipeline.decide(prepared, policies))
			.flatMap(this::answer)
			.onErrorResume(UnreadableRequestException.class, (ex) -> refuse(view, ex, policies))
			.onErrorResume(DataBufferLimitException.class, (ex) -> tooLarge());
	}

	/** Answers a decided step: the rejection, or the headers (held while a check waits for its count) and the turn. */
	private Mono<Boolean> answer(List<Check> step) {
		RequestDecision result = this.checks.add(step);
		if (!result.isAllowed()) {
			return reject(result).then(STOP);
		}
		if (this.checks.holdIfCountsLater()) {
			ServerHttpResponse response = this.exchange.getResponse();
			response.beforeCommit(() -> this.pipeline.store(() -> count(countedStatus())).then());
		}
		if (!this.checks.countsLater() && !step.isEmpty() && result.isLimited()) {
			writeHeaders(result);
		}
		long waitNanos = RequestChecks.waitNanos(step);
		if (waitNanos == 0) {
			return PROCEED;
		}
		this.checks.releaseSlotsToWait();
		return waitForTurn(waitNanos, step);
	}

	/**
	 * Waits for the request's turn on a timer, holding no thread and no slot, then takes its slots again. A
	 * request cancelled before its turn gives the turn back, and any request its waiting place, once.
	 */
	private Mono<Boolean> waitForTurn(long waitNanos, List<Check> step) {
		RequestLimiter limiter = this.pipeline.limiter();
		AtomicBoolean waiting = new AtomicBoolean(true);
		return Mono.delay(Duration.ofNanos(waitNanos))
			.then(this.pipeline.store(() -> {
				if (waiting.compareAndSet(true, false)) {
					limiter.doneWaiting();
				}
				return Optional.ofNullable(this.checks.retakeSlots());
			}))
			.flatMap((refused) -> refused.isEmpty() ? PROCEED : reject(refused.get()).then(STOP))
			.doFinally((signal) -> {
				// Cancelled before its turn (or the timer failed): the turn and the waiting place go back.
				if (waiting.compareAndSet(true, false)) {
					limiter.doneWaiting();
					this.pipeline.storeLater(() -> limiter.giveBackTurn(step));
				}
			});
	}

	/** Counts the request once its status is known, as the response is being committed, then writes the headers. */
	private boolean count(int status) {
		RequestDecision counted = this.checks.complete(status);
		if (counted != null && counted.isLimited()) {
			// Committing, which isCommitted() tells already: the headers still take values.
			this.pipeline.headers().write(counted, new ExchangeHeaders(this.exchange.getResponse().getHeaders()));
		}
		return true;
	}

	private void writeHeaders(RequestDecision result) {
		ServerHttpResponse response = this.exchange.getResponse();
		if (!response.isCommitted()) {
			this.pipeline.headers().write(result, new ExchangeHeaders(response.getHeaders()));
		}
	}

	/**
	 * Answers a rejection: what earlier phases admitted is given back, then the headers and the 429, written by
	 * the application's {@link ReactiveRateLimitRejectionHandler} when it has one.
	 */
	private Mono<Void> reject(RequestDecision result) {
		this.checks.giveBackPending();
		writeHeaders(result);
		ServerHttpResponse response = this.exchange.getResponse();
		response.setStatusCode(HttpStatus.TOO_MANY_REQUESTS);
		response.getHeaders().setCacheControl("no-store");
		ReactiveRateLimitRejectionHandler handler = this.pipeline.rejections();
		return (handler != null) ? handler.reject(this.exchange, result)
				: this.pipeline.problems().quotaExceeded(response, requestUri(), result);
	}

	/**
	 * Answers a request whose key, plan or exemption cannot be told: {@code 400}, unless only shadow policies
	 * apply, which never change a response.
	 */
	private Mono<Boolean> refuse(ExchangeRequestView view, UnreadableRequestException ex, List<RateLimitPolicy> policies) {
		if (!this.pipeline.limiter().refuses(ex, view, policies)) {
			return PROCEED;
		}
		this.checks.giveBackPending();
		return this.pipeline.problems().unreadable(this.exchange.getResponse(), requestUri(), ex).then(STOP);
	}

	/** A form body over {@code spring.http.codecs.max-in-memory-size}: refused, never keyed by the client IP instead. */
	private Mono<Boolean> tooLarge() {
		this.checks.giveBackPending();
		return this.pipeline.problems().tooLarge(this.exchange.getResponse(), requestUri()).then(STOP);
	}

	/**
	 * The chain failed: when no handler was found (404, 405, ...), the path rules are decided now, before the
	 * error is answered, so that a scanner spends its budget and gets its 429.
	 */
	private Mono<Void> answeredWithError(Throwable error) {
		if (this.phase != Phase.OPENED) {
			return Mono.error(error);
		}
		ExchangeRequestView view = this.pipeline.view(this.exchange);
		return decide(view, this.pipeline.policies().resolve(view, null), Phase.DECIDED)
			.flatMap((proceeds) -> proceeds ? Mono.error(error) : Mono.empty());
	}

	/**
	 * After the chain: decides, on path rules alone, a request no handler decided (another filter answered
	 * it: too late to reject or to wait, but it spends its budget), and counts it.
	 */
	private Mono<Void> end() {
		if (this.phase != Phase.OPENED) {
			return Mono.empty();
		}
		this.phase = Phase.DECIDED;
		ExchangeRequestView view = this.pipeline.view(this.exchange);
		List<RateLimitPolicy> rules = this.pipeline.policies().resolve(view, null);
		if (rules.isEmpty()) {
			return Mono.empty();
		}
		boolean readsParameters = rules.stream().anyMatch(RateLimitPolicy::readsParameters);
		return view.prepared(readsParameters)
			.flatMap((prepared) -> this.pipeline.decide(prepared, rules))
			.doOnNext((step) -> {
				RequestDecision result = this.checks.addAnswered(step);
				if (this.checks.countsLater()) {
					this.checks.complete(countedStatus());
				}
				else if (result.isLimited() && result.isAllowed()) {
					writeHeaders(result);
				}
			})
			.onErrorResume(UnreadableRequestException.class, (ex) -> {
				// Answered already: too late for a 400, but counted as the refusal it would have been.
				this.pipeline.limiter().refuses(ex, view, rules);
				return Mono.empty();
			})
			.onErrorResume(DataBufferLimitException.class, (ex) -> Mono.empty())
			.then();
	}

	/**
	 * However the exchange ended, its slots go back. A request cancelled (the client went away) keeps the cost
	 * of a count still waiting, as no response completed; any other is counted as its response is committed,
	 * which may come after the chain ended (an error answered by the error handler, a handler that only sets
	 * a status).
	 */
	private void ended(SignalType signal) {
		if (signal == SignalType.CANCEL) {
			this.checks.complete(RequestLimiter.NO_RESPONSE);
		}
		this.pipeline.storeLater(this.checks::release);
	}

	/** The response's status as counted: a gateway's backend that could not answer is an {@code OUTAGE}. */
	private int countedStatus() {
		int status = statusOf(this.exchange.getResponse());
		return this.pipeline.policies().isOutage(this.pipeline.view(this.exchange), status) ? RequestLimiter.OUTAGE
				: status;
	}

	private String requestUri() {
		return this.exchange.getRequest().getPath().value();
	}

	private static int statusOf(ServerHttpResponse response) {
		HttpStatusCode status = response.getStatusCode();
		return (status != null) ? status.value() : 200;
	}

	/** A reactive response's headers, until it is committed. */
	private record ExchangeHeaders(HttpHeaders headers) implements ResponseHeaders {

		@Override
		public void set(String name, String value) {
			this.headers.set(name, value);
		}

		@Override
		public void remove(String name) {
			this.headers.remove(name);
		}

	}
}
