package io.github.ratelimit.web.reactive;

import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.web.server.ServerWebExchange;

import io.github.ratelimit.web.ReactiveRateLimitRejectionHandler;
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
 * @param rejections the application's own writer of the 429, or {@code null}
 * @param clientIps finds a request's client IP
 * @param rulesUpFront whether every request's path rules are decided before the rest of the filter chain
 * (the filter runs ahead of Spring Security's)
 * @param storeCalls how the store is called without blocking an event loop
 */
record ReactivePipeline(RateLimitPolicyResolver policies, RequestLimiter limiter, RateLimitHeaders headers,
		ProblemWriter problems, @Nullable ReactiveRateLimitRejectionHandler rejections, ClientIpResolver clientIps,
		boolean rulesUpFront, StoreCalls storeCalls) {

	private static final Executor ELASTIC = (task) -> Schedulers.boundedElastic().schedule(task);

	/** The request as the limiter reads it. */
	ExchangeRequestView view(ServerWebExchange exchange) {
		return new ExchangeRequestView(exchange, this.clientIps);
	}

	/**
	 * Decides policies of a request in one store step: once the answers of their asynchronous key and plan
	 * resolvers came, inline, asynchronously, or on the bounded elastic scheduler (see {@link StoreCalls}). A
	 * request cancelled meanwhile does not cancel the step: once decided, it is undone
	 * ({@link RequestLimiter#abandon}), so that a client that disconnects leaves no slot nor waiting place taken.
	 */
	Mono<List<Check>> decide(LimitedRequest request, List<RateLimitPolicy> policies) {
		CompletableFuture<?>[] fetches = new CompletableFuture<?>[policies.size()];
		boolean fetched = true;
		for (int i = 0; i < fetches.length; i++) {
			fetches[i] = policies.get(i).fetch(request);
			fetched &= fetches[i].isDone();
		}
		if (fetched) {
			return decideNow(request, policies);
		}
		// A failed answer refuses the request as its key or plan is read.
		return Mono.fromFuture(CompletableFuture.allOf(fetches).handle((done, failure) -> true))
			.flatMap((done) -> decideNow(request, policies));
	}

	private Mono<List<Check>> decideNow(LimitedRequest request, List<RateLimitPolicy> policies) {
		if (this.storeCalls == StoreCalls.INLINE) {
			// Decided on this thread, CPU only: nothing to wait for, nothing to undo.
			return Mono.fromCallable(() -> this.limiter.decide(request, policies));
		}
		return Mono.defer(() -> {
			CompletableFuture<List<Check>> step = (this.storeCalls == StoreCalls.ASYNC)
					? this.limiter.decideAsync(request, policies).toCompletableFuture()
					: CompletableFuture.supplyAsync(() -> this.limiter.decide(request, policies), ELASTIC);
			// Whoever comes first, the step's answer or the cancel, has it: a step answered is never abandoned. The
			// answer is handed on where it is claimed (after publishOn), so that a cancel meanwhile finds it unclaimed.
			AtomicBoolean claimed = new AtomicBoolean();
			return Mono.fromFuture(step, true)
				// Answered off the thread that completed the step (never the Redis client's own), where the store
				// may be called again (a release of slots to wait, a give-back of a refused request).
				.publishOn(Schedulers.boundedElastic())
				.filter((decided) -> claimed.compareAndSet(false, true))
				.doOnCancel(() -> {
					if (claimed.compareAndSet(false, true)) {
						step.thenAcceptAsync(this.limiter::abandon, ELASTIC);
					}
				});
		});
	}

	/** A call of the store: now, or, when the store blocks, on the bounded elastic scheduler. */
	<T> Mono<T> store(Callable<T> call) {
		Mono<T> mono = Mono.fromCallable(call);
		return (this.storeCalls != StoreCalls.INLINE) ? mono.subscribeOn(Schedulers.boundedElastic()) : mono;
	}

	/** A call of the store whose outcome no one waits for (giving back). */
	void storeLater(Runnable call) {
		if (this.storeCalls != StoreCalls.INLINE) {
			Schedulers.boundedElastic().schedule(call);
		}
		else {
			call.run();
		}
	}
}
