package io.github.ratelimit.web.reactive;

import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;

import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.web.server.ServerWebExchange;

import io.github.ratelimit.web.clientip.ClientIpResolver;
import io.github.ratelimit.web.key.LimitedRequest;
import io.github.ratelimit.web.limiter.Check;
import io.github.ratelimit.web.limiter.RateLimitHeaders;
import io.github.ratelimit.web.limiter.RequestLimiter;
import io.github.ratelimit.web.policy.RateLimitPolicy;
import io.github.ratelimit.web.policy.RateLimitPolicyResolver;

/**
 * The stateless services a {@link ReactiveRateLimitExchange} moves through, one set per application, as the
 * servlet side's: they find a request's policies, decide them, render the headers and the problems.
 * @param policies finds the policies of a request
 * @param limiter decides them, in one store call
 * @param headers renders the rate limit headers
 * @param problems writes the 429 and the 400
 * @param clientIps finds a request's client IP
 * @param rulesUpFront whether every request's path rules are decided before the rest of the filter chain
 * (the filter runs ahead of Spring Security's)
 * @param blockingStore whether the store's calls block (a store that is not the in-process one): they then
 * run on Reactor's bounded elastic scheduler, never on an event loop
 */
record ReactivePipeline(RateLimitPolicyResolver policies, RequestLimiter limiter, RateLimitHeaders headers,
		ProblemWriter problems, ClientIpResolver clientIps, boolean rulesUpFront, boolean blockingStore) {

	private static final Executor ELASTIC = (task) -> Schedulers.boundedElastic().schedule(task);

	/** The request as the limiter reads it. */
	ExchangeRequestView view(ServerWebExchange exchange) {
		return new ExchangeRequestView(exchange, this.clientIps);
	}

	/**
	 * Decides policies of a request in one store step: now, or, when the store blocks, on the bounded elastic
	 * scheduler. A request cancelled meanwhile does not cancel the step: once decided, it is undone
	 * ({@link RequestLimiter#abandon}), so that a client that disconnects leaves no slot nor waiting place taken.
	 */
	Mono<List<Check>> decide(LimitedRequest request, List<RateLimitPolicy> policies) {
		if (!this.blockingStore) {
			return Mono.defer(() -> Mono.fromCompletionStage(this.limiter.decide(request, policies)));
		}
		return Mono.defer(() -> {
			CompletableFuture<List<Check>> step = CompletableFuture
				.supplyAsync(() -> RequestLimiter.join(this.limiter.decide(request, policies)), ELASTIC);
			// Whoever comes first, the step's answer or the cancel, has it: a step answered is never abandoned.
			AtomicBoolean claimed = new AtomicBoolean();
			return Mono.fromFuture(step, true)
				.filter((decided) -> claimed.compareAndSet(false, true))
				.doOnCancel(() -> {
					if (claimed.compareAndSet(false, true)) {
						step.thenAcceptAsync(this.limiter::abandon, ELASTIC);
					}
				})
				// Answered off the event loop, whichever thread completed the step (an answer may call the store).
				.publishOn(Schedulers.boundedElastic());
		});
	}

	/** A call of the store: now, or, when the store blocks, on the bounded elastic scheduler. */
	<T> Mono<T> store(Callable<T> call) {
		Mono<T> mono = Mono.fromCallable(call);
		return this.blockingStore ? mono.subscribeOn(Schedulers.boundedElastic()) : mono;
	}

	/** A call of the store whose outcome no one waits for (giving back). */
	void storeLater(Runnable call) {
		if (this.blockingStore) {
			Schedulers.boundedElastic().schedule(call);
		}
		else {
			call.run();
		}
	}
}
