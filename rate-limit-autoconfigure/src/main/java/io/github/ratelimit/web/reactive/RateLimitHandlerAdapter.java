package io.github.ratelimit.web.reactive;

import java.util.List;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.core.Ordered;
import org.springframework.web.reactive.HandlerAdapter;
import org.springframework.web.reactive.HandlerResult;
import org.springframework.web.server.ServerWebExchange;

/**
 * Decides a request's {@link ReactiveRateLimitExchange} once WebFlux knows where it goes: the dispatcher has
 * looked the handler up (its own lookup, done once, so resolution is exact and the handler's URI template
 * variables are there for keys) and asks the first handler adapter that supports the handler. This one comes
 * first and supports what the application's adapters support: it decides, then hands the request to the
 * adapter that would have had it, or stops it when it was answered (a 429, a 400). Requests whose lookup fails
 * never reach an adapter: the filter decides them. Stateless.
 */
final class RateLimitHandlerAdapter implements HandlerAdapter, Ordered, SmartInitializingSingleton {

	private final Supplier<List<HandlerAdapter>> adapters;

	/**
	 * The application's adapters, found once the application's beans exist (else on first use: twice at worst,
	 * never under a lock, as an event loop asks).
	 */
	private volatile @Nullable List<HandlerAdapter> found;

	/**
	 * Creates the adapter.
	 * @param adapters the application's handler adapters, in order, this one left out
	 */
	RateLimitHandlerAdapter(Supplier<List<HandlerAdapter>> adapters) {
		this.adapters = adapters;
	}

	@Override
	public void afterSingletonsInstantiated() {
		this.found = this.adapters.get();
	}

	@Override
	public boolean supports(Object handler) {
		return delegate(handler) != null;
	}

	@Override
	public Mono<HandlerResult> handle(ServerWebExchange exchange, Object handler) {
		HandlerAdapter delegate = delegate(handler);
		if (delegate == null) {
			return Mono.error(new IllegalStateException("No HandlerAdapter for handler " + handler));
		}
		ReactiveRateLimitExchange limited = ReactiveRateLimitExchange.undecided(exchange);
		if (limited == null) {
			return delegate.handle(exchange, handler);
		}
		return limited.decideHandler(exchange, handler)
			.flatMap((proceeds) -> proceeds ? delegate.handle(exchange, handler) : Mono.empty());
	}

	private @Nullable HandlerAdapter delegate(Object handler) {
		List<HandlerAdapter> adapters = this.found;
		if (adapters == null) {
			adapters = this.adapters.get();
			this.found = adapters;
		}
		for (HandlerAdapter adapter : adapters) {
			if (adapter != this && adapter.supports(handler)) {
				return adapter;
			}
		}
		return null;
	}

	@Override
	public int getOrder() {
		return Ordered.HIGHEST_PRECEDENCE;
	}
}
