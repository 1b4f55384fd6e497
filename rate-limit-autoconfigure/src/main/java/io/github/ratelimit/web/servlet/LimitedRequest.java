package io.github.ratelimit.web.servlet;

import java.io.IOException;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import jakarta.servlet.AsyncContext;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import org.jspecify.annotations.Nullable;

import org.springframework.web.util.ContentCachingResponseWrapper;

import io.github.ratelimit.core.Acquisition;

/**
 * One request on its way through the limiter: opened by the {@link RateLimitFilter} on the request's
 * first dispatch, decided exactly once (by the {@link RateLimitInterceptor} when Spring MVC looks up
 * the handler, else by the filter), and, for policies that count only some responses, counted once
 * its response is known. Held as a request attribute; used by one request at a time (an async request
 * hands it from thread to thread through the container, which orders the accesses).
 */
final class LimitedRequest {

	static final String ATTRIBUTE = LimitedRequest.class.getName();

	private final @Nullable HeldResponse held;

	private boolean decided;

	private boolean rulesDecided;

	private @Nullable RequestDecision rules;

	private List<RateLimitPolicy> rulePolicies = List.of();

	/** A result that counts once the response is known; taken by whichever counts it first. */
	private final AtomicReference<@Nullable RequestDecision> countLater = new AtomicReference<>();

	private @Nullable HeldSlots slots;

	private @Nullable RateLimitInterceptor counter;

	private LimitedRequest(@Nullable HttpServletResponse response) {
		this.held = (response != null) ? new HeldResponse(response, this) : null;
	}

	/**
	 * Opens a request and makes it findable by the interceptor.
	 * @param request the request, on its first dispatch
	 * @param response its response
	 * @param mayCountLater whether any policy counts only some responses (then the body can be held)
	 * @return the request's state
	 */
	static LimitedRequest open(HttpServletRequest request, HttpServletResponse response, boolean mayCountLater) {
		LimitedRequest limited = new LimitedRequest(mayCountLater ? response : null);
		request.setAttribute(ATTRIBUTE, limited);
		return limited;
	}

	/**
	 * Returns the request's state when it still waits for its decision.
	 * @param request a request
	 * @return the state, or {@code null} when the request is decided already, was not opened by the
	 * filter, or is not on its first dispatch
	 */
	static @Nullable LimitedRequest undecided(HttpServletRequest request) {
		if (request.getDispatcherType() != jakarta.servlet.DispatcherType.REQUEST) {
			return null;
		}
		Object limited = request.getAttribute(ATTRIBUTE);
		return (limited instanceof LimitedRequest pending && !pending.decided) ? pending : null;
	}

	static @Nullable LimitedRequest of(HttpServletRequest request) {
		return (request.getAttribute(ATTRIBUTE) instanceof LimitedRequest limited) ? limited : null;
	}

	/** The response the rest of the chain writes to; its status decides a count, and it takes the headers. */
	HttpServletResponse response(HttpServletResponse response) {
		return (this.held != null) ? this.held : response;
	}

	boolean isDecided() {
		return this.decided;
	}

	void decided() {
		this.decided = true;
	}

	/**
	 * Reopens a request whose path rules were decided before the filters after the rate limit filter ran,
	 * for its handler's own policies, once Spring MVC has found the handler.
	 * @param rules the (allowed) result of the path rules, or {@code null} when none applied
	 * @param rulePolicies the path rules' policies (as resolved, before exemptions and plans)
	 */
	void awaitHandler(@Nullable RequestDecision rules, List<RateLimitPolicy> rulePolicies) {
		this.rulesDecided = true;
		this.rules = rules;
		this.rulePolicies = rulePolicies;
		this.decided = false;
	}

	/** The path rules' policies decided up front (none otherwise). */
	List<RateLimitPolicy> rulePolicies() {
		return this.rulePolicies;
	}

	/** Whether the request's path rules were decided up front (then only its handler's policies are left). */
	boolean rulesDecided() {
		return this.rulesDecided;
	}

	/** The allowed result of the path rules decided up front, if any applied. */
	@Nullable RequestDecision rules() {
		return this.rules;
	}

	/**
	 * Remembers a result whose policies count the request only once the response is known, and holds
	 * the response body back until then, so that a client cannot read the answer and send its next
	 * attempt before this one is counted.
	 */
	void countLater(RequestDecision result, RateLimitInterceptor counter) {
		this.counter = counter;
		this.countLater.set(result);
		if (this.held != null) {
			this.held.hold();
		}
	}

	/**
	 * Counts a request waiting for its count as its status becomes final through {@code sendError} or
	 * {@code sendRedirect}: from then on the container takes the response as committed and ignores
	 * headers (e.g. the answer to a {@code ResponseStatusException}).
	 */
	private void countAsAnswerIsSent(int status) {
		RateLimitInterceptor counter = this.counter;
		if (counter != null && this.held != null) {
			RequestDecision result = takeCount();
			if (result != null) {
				counter.count(result, status, this.held);
			}
		}
	}

	/**
	 * Takes the result waiting for its count, so that it is counted once.
	 * @return the result, or {@code null} when none waits (any more)
	 */
	@Nullable RequestDecision takeCount() {
		return this.countLater.getAndSet(null);
	}

	@Nullable RequestDecision pendingCount() {
		return this.countLater.get();
	}

	/**
	 * Remembers the slots of concurrency limits the request took, to give back when it ends.
	 * @param result an allowed result
	 * @param limiter gives them back
	 */
	void holdSlots(RequestDecision result, RequestLimiter limiter) {
		if (!result.slots().isEmpty()) {
			this.slots = new HeldSlots(result.slots(), limiter);
		}
	}

	@Nullable HeldSlots slots() {
		return this.slots;
	}

	/** Lets a held body go. */
	void release() throws IOException {
		if (this.held != null) {
			this.held.release();
		}
	}

	/**
	 * The slots of concurrency limits one request holds, given back exactly once: when the request's
	 * first dispatch ends (or fails), or, for an async request, when its async processing completes,
	 * fails or times out ({@link AsyncListener}: a client that went away may never cause another
	 * dispatch, but the container still completes the request). Thread-safe.
	 */
	static final class HeldSlots implements AsyncListener {

		private final List<Acquisition> slots;

		private final RequestLimiter limiter;

		private final AtomicBoolean released = new AtomicBoolean();

		HeldSlots(List<Acquisition> slots, RequestLimiter limiter) {
			this.slots = slots;
			this.limiter = limiter;
		}

		/** Gives the slots back, the first time only. */
		void release() {
			if (this.released.compareAndSet(false, true)) {
				this.limiter.release(this.slots);
			}
		}

		@Override
		public void onComplete(AsyncEvent event) {
			release();
		}

		@Override
		public void onTimeout(AsyncEvent event) {
			release();
		}

		@Override
		public void onError(AsyncEvent event) {
			release();
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

	/**
	 * A response that passes everything through until {@link #hold()}; from then on its body is cached
	 * until {@link #release()}, and a request waiting for its count is counted as an error or a redirect is
	 * sent. Only a request that counts later pays for the copy.
	 */
	static final class HeldResponse extends HttpServletResponseWrapper {

		private final LimitedRequest request;

		private @Nullable ContentCachingResponseWrapper cache;

		HeldResponse(HttpServletResponse response, LimitedRequest request) {
			super(response);
			this.request = request;
		}

		@Override
		public void sendError(int status) throws IOException {
			countThen(status, () -> super.sendError(status));
		}

		@Override
		public void sendError(int status, String message) throws IOException {
			countThen(status, () -> super.sendError(status, message));
		}

		@Override
		public void sendRedirect(String location) throws IOException {
			countThen(SC_FOUND, () -> super.sendRedirect(location));
		}

		@Override
		public void sendRedirect(String location, boolean clearBuffer) throws IOException {
			countThen(SC_FOUND, () -> super.sendRedirect(location, clearBuffer));
		}

		@Override
		public void sendRedirect(String location, int status) throws IOException {
			countThen(status, () -> super.sendRedirect(location, status));
		}

		@Override
		public void sendRedirect(String location, int status, boolean clearBuffer) throws IOException {
			countThen(status, () -> super.sendRedirect(location, status, clearBuffer));
		}

		/** Counts a request waiting for its count with the status being sent, then sends it. */
		private void countThen(int status, Answer answer) throws IOException {
			try {
				this.request.countAsAnswerIsSent(status);
			}
			finally {
				answer.send();
			}
		}

		/** An error or a redirect, sent to the container. */
		@FunctionalInterface
		private interface Answer {

			void send() throws IOException;

		}

		void hold() {
			if (this.cache == null) {
				this.cache = new ContentCachingResponseWrapper((HttpServletResponse) getResponse());
				setResponse(this.cache);
			}
		}

		void release() throws IOException {
			if (this.cache != null) {
				this.cache.copyBodyToResponse();
			}
		}

	}
}
