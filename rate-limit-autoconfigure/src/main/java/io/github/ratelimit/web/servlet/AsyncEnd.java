package io.github.ratelimit.web.servlet;

import jakarta.servlet.AsyncContext;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;

/**
 * Tells a request's exchange when the container ends its async processing (completed, failed or timed
 * out), so that it gives back its turn and its slots: a client that went away may never cause another
 * dispatch, but the container still ends the request.
 * @param exchange the request's exchange
 */
record AsyncEnd(RateLimitExchange exchange) implements AsyncListener {

	@Override
	public void onComplete(AsyncEvent event) {
		this.exchange.ended();
	}

	@Override
	public void onTimeout(AsyncEvent event) {
		this.exchange.ended();
	}

	@Override
	public void onError(AsyncEvent event) {
		this.exchange.ended();
	}

	@Override
	public void onStartAsync(AsyncEvent event) {
		// A new async cycle (an async dispatch started another): listeners must register again.
		AsyncContext context = event.getAsyncContext();
		if (context != null) {
			context.addListener(this);
		}
	}

}
