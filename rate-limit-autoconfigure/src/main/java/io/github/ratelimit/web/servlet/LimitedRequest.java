package io.github.ratelimit.web.servlet;

import java.io.IOException;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import org.jspecify.annotations.Nullable;

import org.springframework.web.util.ContentCachingResponseWrapper;

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

	private @Nullable RequestDecision countLater;

	private LimitedRequest(@Nullable HeldResponse held) {
		this.held = held;
	}

	/**
	 * Opens a request and makes it findable by the interceptor.
	 * @param request the request, on its first dispatch
	 * @param response its response
	 * @param mayCountLater whether any policy counts only some responses (then the body can be held)
	 * @return the request's state
	 */
	static LimitedRequest open(HttpServletRequest request, HttpServletResponse response, boolean mayCountLater) {
		LimitedRequest limited = new LimitedRequest(mayCountLater ? new HeldResponse(response) : null);
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
	 * Remembers a result whose policies count the request only once the response is known, and holds
	 * the response body back until then, so that a client cannot read the answer and send its next
	 * attempt before this one is counted.
	 */
	void countLater(RequestDecision result) {
		this.countLater = result;
		if (this.held != null) {
			this.held.hold();
		}
	}

	void counted() {
		this.countLater = null;
	}

	@Nullable RequestDecision pendingCount() {
		return this.countLater;
	}

	/** Lets a held body go. */
	void release() throws IOException {
		if (this.held != null) {
			this.held.release();
		}
	}

	/**
	 * A response that passes everything through until {@link #hold()}; from then on its body is cached
	 * until {@link #release()}. Only a request that counts later pays for the copy.
	 */
	static final class HeldResponse extends HttpServletResponseWrapper {

		private @Nullable ContentCachingResponseWrapper cache;

		HeldResponse(HttpServletResponse response) {
			super(response);
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
