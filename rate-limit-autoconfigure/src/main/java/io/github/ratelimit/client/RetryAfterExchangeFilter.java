package io.github.ratelimit.client;

import java.time.Duration;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.web.reactive.function.BodyInserters;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.ExchangeFunction;

/**
 * Retries {@code WebClient} requests that a server turned away with {@code 429}, or {@code 503} with
 * {@code Retry-After}, by the rule of a {@link RetryAfterInterceptor} (the same {@code rate-limit.client.retry.*}
 * settings): its {@code Retry-After}, else the exponential backoff with jitter, within the attempts and the total
 * wait, for the configured methods only. The wait is a timer on a {@link Scheduler}, never a blocked thread.
 * <p>
 * Only requests without a body are retried: a body publisher may not be replayable, and a request whose body
 * cannot be sent again must not be sent half. A response that is retried has its body released first; the
 * last response is returned as it came. Not Reactor's {@code Retry}: it retries errors, not responses, with
 * its own jitter, and cannot wait for a {@code Retry-After}. Errors are not retried. Immutable and thread-safe.
 */
public final class RetryAfterExchangeFilter implements ExchangeFilterFunction {

	private static final Log logger = LogFactory.getLog(RetryAfterExchangeFilter.class);

	private final RetryAfterInterceptor rule;

	private final Scheduler timer;

	/**
	 * Creates a filter that waits on Reactor's parallel scheduler.
	 * @param rule when and how long to wait, and how often
	 */
	public RetryAfterExchangeFilter(RetryAfterInterceptor rule) {
		this(rule, Schedulers.parallel());
	}

	/**
	 * Creates a filter.
	 * @param rule when and how long to wait, and how often
	 * @param timer where the waits are timed (a virtual-time scheduler in tests)
	 */
	public RetryAfterExchangeFilter(RetryAfterInterceptor rule, Scheduler timer) {
		this.rule = rule;
		this.timer = timer;
	}

	@Override
	public Mono<ClientResponse> filter(ClientRequest request, ExchangeFunction next) {
		if (!this.rule.retries(request.method()) || request.body() != BodyInserters.empty()) {
			return next.exchange(request);
		}
		return attempt(request, next, 1, Duration.ZERO);
	}

	private Mono<ClientResponse> attempt(ClientRequest request, ExchangeFunction next, int attempt, Duration waited) {
		return next.exchange(request).flatMap((response) -> {
			Duration delay = (attempt < this.rule.maxAttempts()) ? this.rule.delayBeforeRetry(response.statusCode().value(),
					response.headers().asHttpHeaders(), attempt - 1, waited) : null;
			if (delay == null) {
				return Mono.just(response);
			}
			debug(request, response, delay, attempt);
			return response.releaseBody()
				.then(Mono.delay(delay, this.timer))
				.then(Mono.defer(() -> attempt(request, next, attempt + 1, waited.plus(delay))));
		});
	}

	private void debug(ClientRequest request, ClientResponse response, @Nullable Duration delay, int attempt) {
		if (logger.isDebugEnabled()) {
			logger.debug("Retrying " + request.method() + " " + request.url().getRawPath() + " after "
					+ response.statusCode().value() + " in " + delay + " (attempt " + (attempt + 1) + " of "
					+ this.rule.maxAttempts() + ")");
		}
	}
}
