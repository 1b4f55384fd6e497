package io.github.ratelimit.client;

import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.random.RandomGenerator;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.core.Ordered;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpRequest;
import org.springframework.http.HttpStatus;
import org.springframework.http.client.ClientHttpRequestExecution;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.ClientHttpResponse;
import org.springframework.http.client.support.HttpRequestWrapper;
import org.springframework.util.Assert;

/**
 * Retries requests that a server turned away with {@code 429 Too Many Requests}, or with
 * {@code 503 Service Unavailable} carrying {@code Retry-After}, for {@code RestClient} and
 * {@code RestTemplate}.
 * <p>
 * The wait before a retry is the response's {@code Retry-After} when it has a valid one
 * (delay-seconds, or an HTTP-date relative to the response's {@code Date}, else to the clock).
 * Without it, a {@code 429} is retried after an exponential backoff with jitter,
 * {@code min(maxDelay, baseDelay * 2^retry) * random[0.5, 1.0)} where {@code retry} counts from 0,
 * and a {@code 503} is not retried. An invalid {@code Retry-After} counts as absent.
 * <p>
 * Bounds: at most {@code maxAttempts} tries in all (the first one included), and at most
 * {@code maxTotalWait} spent waiting over all retries of one call (time spent in the requests
 * themselves is not counted). A wait that does not fit in what is left of that budget is not made:
 * the response is returned to the caller at once. Only the {@linkplain Builder#methods methods}
 * configured are retried, by default the idempotent ones ({@link #IDEMPOTENT_METHODS}).
 * <p>
 * The body of a request is sent again, unchanged, on each retry; interceptors installed after this
 * one run again on each retry. A response that is retried is read to the end and closed; the last
 * response is returned as it came. When the thread is interrupted while waiting, the interrupt flag
 * is restored and the last response (a copy in memory) is returned. I/O errors are not retried.
 * <p>
 * Instances are immutable and thread-safe, provided the {@link Sleeper}, {@link Clock} and
 * {@link RandomGenerator} given to the builder are.
 */
public final class RetryAfterInterceptor implements ClientHttpRequestInterceptor, Ordered {

	/** Methods retried by default: GET, HEAD, OPTIONS, PUT, DELETE and TRACE (RFC 9110 §9.2.2). */
	public static final Set<HttpMethod> IDEMPOTENT_METHODS = Collections.unmodifiableSet(new LinkedHashSet<>(
			Arrays.asList(HttpMethod.GET, HttpMethod.HEAD, HttpMethod.OPTIONS, HttpMethod.PUT, HttpMethod.DELETE,
					HttpMethod.TRACE)));

	/** Default for {@link Builder#maxAttempts(int)}: 3 tries in all, so at most 2 retries. */
	public static final int DEFAULT_MAX_ATTEMPTS = 3;

	/** Default for {@link Builder#baseDelay(Duration)}. */
	public static final Duration DEFAULT_BASE_DELAY = Duration.ofMillis(100);

	/** Default for {@link Builder#maxDelay(Duration)}. */
	public static final Duration DEFAULT_MAX_DELAY = Duration.ofSeconds(2);

	/** Default for {@link Builder#maxTotalWait(Duration)}. */
	public static final Duration DEFAULT_MAX_TOTAL_WAIT = Duration.ofSeconds(5);

	private static final Log logger = LogFactory.getLog(RetryAfterInterceptor.class);

	// Shares ThreadLocalRandom, each thread drawing from its own generator.
	private static final RandomGenerator THREAD_LOCAL_RANDOM = () -> ThreadLocalRandom.current().nextLong();

	private final int maxAttempts;

	private final long baseDelayNanos;

	private final long maxDelayNanos;

	private final Duration maxTotalWait;

	private final Set<HttpMethod> methods;

	private final Sleeper sleeper;

	private final Clock clock;

	private final RandomGenerator random;

	private RetryAfterInterceptor(Builder builder) {
		this.maxAttempts = builder.maxAttempts;
		// Saturated: a duration beyond Long.MAX_VALUE nanoseconds counts as that.
		this.baseDelayNanos = TimeUnit.NANOSECONDS.convert(builder.baseDelay);
		this.maxDelayNanos = TimeUnit.NANOSECONDS.convert(builder.maxDelay);
		this.maxTotalWait = builder.maxTotalWait;
		this.methods = Collections.unmodifiableSet(new LinkedHashSet<>(builder.methods));
		this.sleeper = builder.sleeper;
		this.clock = builder.clock;
		this.random = builder.random;
	}

	/**
	 * Returns a builder with the defaults: {@value #DEFAULT_MAX_ATTEMPTS} attempts, a base delay of
	 * 100ms, a maximum delay of 2s, a total wait of 5s, the idempotent methods, the system clock,
	 * {@link Sleeper#SYSTEM} and {@link ThreadLocalRandom}.
	 * @return a new builder
	 */
	public static Builder builder() {
		return new Builder();
	}

	@Override
	public ClientHttpResponse intercept(HttpRequest request, byte[] body, ClientHttpRequestExecution execution)
			throws IOException {
		if (!retries(request.getMethod())) {
			return execution.execute(request, body);
		}
		// Not Spring's RetryTemplate: it retries thrown exceptions only and throws when it gives up (the last response
		// is returned here), asks its BackOff for a wait without the response (Retry-After), sleeps with Thread.sleep
		// in milliseconds (no Sleeper), and times out on the wall clock, requests included (here only waits count).
		Duration waited = Duration.ZERO;
		HttpHeaders sent = HttpHeaders.copyOf(request.getHeaders());
		for (int attempt = 1;; attempt++) {
			// Each retry with the headers as they came here: the interceptors after this one (a signature, a
			// token) set theirs afresh, never on top of the attempt before's.
			ClientHttpResponse response = execution.execute((attempt == 1) ? request : withHeaders(request, sent), body);
			if (attempt >= this.maxAttempts) {
				return response;
			}
			Duration delay = delayBeforeRetry(response.getStatusCode().value(), response.getHeaders(), attempt - 1, waited);
			if (delay == null) {
				return response;
			}
			ClientHttpResponse discarded = DrainedResponse.drain(response);
			if (logger.isDebugEnabled()) {
				logger.debug("Retrying " + request.getMethod() + " " + request.getURI().getRawPath() + " after "
						+ discarded.getStatusCode().value() + " in " + delay + " (attempt " + (attempt + 1) + " of "
						+ this.maxAttempts + ")");
			}
			try {
				this.sleeper.sleep(delay);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return discarded;
			}
			waited = waited.plus(delay);
		}
	}

	private static HttpRequest withHeaders(HttpRequest request, HttpHeaders headers) {
		HttpHeaders own = HttpHeaders.copyOf(headers);
		return new HttpRequestWrapper(request) {

			@Override
			public HttpHeaders getHeaders() {
				return own;
			}

		};
	}

	/**
	 * Runs first among a client's interceptors (a {@code RestTemplate} sorts them by order), so that the
	 * others run again on each retry.
	 * @return {@link Ordered#HIGHEST_PRECEDENCE}
	 */
	@Override
	public int getOrder() {
		return Ordered.HIGHEST_PRECEDENCE;
	}

	/** Whether requests of a method are retried. */
	boolean retries(HttpMethod method) {
		return this.methods.contains(method);
	}

	/** The most tries in all, the first one included. */
	int maxAttempts() {
		return this.maxAttempts;
	}

	/**
	 * Returns how long to wait before retrying a response, or {@code null} not to retry it: its
	 * {@code Retry-After}, else the backoff of a {@code 429}, when it fits in what is left of the total wait.
	 * The same rule for every client ({@link RetryAfterExchangeFilter} asks it too).
	 * @param status the response's status
	 * @param headers its headers
	 * @param retry the number of retries already made, from 0
	 * @param waited how long the retries of this call waited so far
	 */
	@Nullable Duration delayBeforeRetry(int status, HttpHeaders headers, int retry, Duration waited) {
		if (status != HttpStatus.TOO_MANY_REQUESTS.value() && status != HttpStatus.SERVICE_UNAVAILABLE.value()) {
			return null;
		}
		Duration retryAfter = RetryAfter.delay(headers, this.clock);
		Duration delay = (retryAfter != null) ? retryAfter
				: (status == HttpStatus.TOO_MANY_REQUESTS.value()) ? backoff(retry) : null;
		return (delay != null && delay.compareTo(this.maxTotalWait.minus(waited)) <= 0) ? delay : null;
	}

	/**
	 * Returns the backoff before a retry: {@code min(maxDelay, baseDelay * 2^retry) * random[0.5, 1.0)}.
	 * @param retry the number of retries already made, from 0
	 * @return the delay
	 */
	Duration backoff(int retry) {
		long exponential = (retry >= Long.SIZE - 1 || this.baseDelayNanos > (this.maxDelayNanos >> retry))
				? this.maxDelayNanos : Math.min(this.maxDelayNanos, this.baseDelayNanos << retry);
		return Duration.ofNanos((long) (exponential * this.random.nextDouble(0.5, 1.0)));
	}

	/**
	 * Builds a {@link RetryAfterInterceptor}; every setting has a default. Not thread-safe.
	 */
	public static final class Builder {

		private int maxAttempts = DEFAULT_MAX_ATTEMPTS;

		private Duration baseDelay = DEFAULT_BASE_DELAY;

		private Duration maxDelay = DEFAULT_MAX_DELAY;

		private Duration maxTotalWait = DEFAULT_MAX_TOTAL_WAIT;

		private Set<HttpMethod> methods = IDEMPOTENT_METHODS;

		private Sleeper sleeper = Sleeper.SYSTEM;

		private Clock clock = Clock.systemUTC();

		private RandomGenerator random = THREAD_LOCAL_RANDOM;

		private Builder() {
		}

		/**
		 * Sets how many times a request is sent at most, the first time included; 1 retries nothing.
		 * @param maxAttempts at least 1
		 * @return this builder
		 */
		public Builder maxAttempts(int maxAttempts) {
			Assert.isTrue(maxAttempts >= 1, () -> "maxAttempts must be at least 1, was " + maxAttempts);
			this.maxAttempts = maxAttempts;
			return this;
		}

		/**
		 * Sets the backoff before the first retry of a {@code 429} without {@code Retry-After},
		 * before jitter; it doubles with each retry.
		 * @param baseDelay zero or positive
		 * @return this builder
		 */
		public Builder baseDelay(Duration baseDelay) {
			this.baseDelay = notNegative(baseDelay, "baseDelay");
			return this;
		}

		/**
		 * Sets the longest backoff, before jitter. It does not cap a {@code Retry-After}.
		 * @param maxDelay zero or positive
		 * @return this builder
		 */
		public Builder maxDelay(Duration maxDelay) {
			this.maxDelay = notNegative(maxDelay, "maxDelay");
			return this;
		}

		/**
		 * Sets the most time spent waiting over all the retries of one call; a retry whose wait does
		 * not fit in what is left is not made.
		 * @param maxTotalWait zero or positive
		 * @return this builder
		 */
		public Builder maxTotalWait(Duration maxTotalWait) {
			this.maxTotalWait = notNegative(maxTotalWait, "maxTotalWait");
			return this;
		}

		/**
		 * Sets the methods whose requests are retried, replacing the default
		 * {@link RetryAfterInterceptor#IDEMPOTENT_METHODS}. Add {@code POST} or {@code PATCH} only for
		 * endpoints where sending a request twice is safe.
		 * @param methods the methods
		 * @return this builder
		 */
		public Builder methods(Collection<HttpMethod> methods) {
			Assert.notNull(methods, "methods must not be null");
			Assert.noNullElements(methods, "methods must not contain null");
			this.methods = new LinkedHashSet<>(methods);
			return this;
		}

		/**
		 * Sets the methods whose requests are retried, replacing the default
		 * {@link RetryAfterInterceptor#IDEMPOTENT_METHODS}.
		 * @param methods the methods
		 * @return this builder
		 */
		public Builder methods(HttpMethod... methods) {
			return methods(Arrays.asList(methods));
		}

		/**
		 * Sets how to wait between attempts; tests pass a fake that records the waits.
		 * @param sleeper the sleeper
		 * @return this builder
		 */
		public Builder sleeper(Sleeper sleeper) {
			Assert.notNull(sleeper, "sleeper must not be null");
			this.sleeper = sleeper;
			return this;
		}

		/**
		 * Sets the clock that a {@code Retry-After} HTTP-date is taken relative to when the response
		 * carries no valid {@code Date} header.
		 * @param clock the clock
		 * @return this builder
		 */
		public Builder clock(Clock clock) {
			Assert.notNull(clock, "clock must not be null");
			this.clock = clock;
			return this;
		}

		/**
		 * Sets the source of jitter; only {@link RandomGenerator#nextDouble(double, double)} is called,
		 * whose default implementation calls {@link RandomGenerator#nextDouble()}.
		 * @param random the generator
		 * @return this builder
		 */
		public Builder random(RandomGenerator random) {
			Assert.notNull(random, "random must not be null");
			this.random = random;
			return this;
		}

		/**
		 * Builds the interceptor.
		 * @return a new interceptor
		 */
		public RetryAfterInterceptor build() {
			return new RetryAfterInterceptor(this);
		}

		private static Duration notNegative(Duration duration, String name) {
			Assert.notNull(duration, () -> name + " must not be null");
			Assert.isTrue(!duration.isNegative(), () -> name + " must not be negative, was " + duration);
			return duration;
		}

	}

}
