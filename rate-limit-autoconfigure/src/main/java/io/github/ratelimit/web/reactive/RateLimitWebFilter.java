package io.github.ratelimit.web.reactive;

import reactor.core.publisher.Mono;

import org.springframework.core.Ordered;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

/**
 * Opens a {@link ReactiveRateLimitExchange} for each request and runs the rest of the chain through it: the
 * {@link RateLimitHandlerAdapter} decides it in between once WebFlux has found the handler. Steps aside when no
 * policy applies to any request. Ordered by {@code rate-limit.filter-order}, as the servlet filter. Stateless.
 */
final class RateLimitWebFilter implements WebFilter, Ordered {

	private final ReactivePipeline pipeline;

	private final int order;

	RateLimitWebFilter(ReactivePipeline pipeline, int order) {
		this.pipeline = pipeline;
		this.order = order;
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
		if (!this.pipeline.policies().limitsAnything()) {
			return chain.filter(exchange);
		}
		return ReactiveRateLimitExchange.open(this.pipeline, exchange).filter(chain);
	}

	@Override
	public int getOrder() {
		return this.order;
	}
}
