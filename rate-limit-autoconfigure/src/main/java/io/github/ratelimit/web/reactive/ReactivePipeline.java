package io.github.ratelimit.web.reactive;

import java.util.concurrent.Callable;

import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.web.server.ServerWebExchange;

import io.github.ratelimit.web.clientip.ClientIpResolver;
import io.github.ratelimit.web.limiter.RateLimitHeaders;
import io.github.ratelimit.web.limiter.RequestLimiter;
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

	/** The request as the limiter reads it. */
	ExchangeRequestView view(ServerWebExchange exchange) {
		return new ExchangeRequestView(exchange, this.clientIps);
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
