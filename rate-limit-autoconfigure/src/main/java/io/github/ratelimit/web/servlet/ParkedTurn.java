package io.github.ratelimit.web.servlet;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import jakarta.servlet.AsyncContext;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletRequestWrapper;
import jakarta.servlet.http.HttpServletMapping;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import io.github.ratelimit.web.RequestDelay;
import io.github.ratelimit.web.limiter.Check;

/**
 * A request's wait for its turn (delay mode) without its thread: the request is parked with the Servlet
 * async API, the timer ({@link RequestDelay}) dispatches it again when its turn comes, and the filter
 * resumes it as its first dispatch would have gone on ({@link ResumedRequest}). The wait ends once: its
 * turn came, or the container ended the request first (then the turn is given back). A request that
 * cannot go async waits on its thread instead ({@link #waitOnThread}). Thread-safe.
 */
final class ParkedTurn {

	private static final Log logger = LogFactory.getLog(ParkedTurn.class);

	/** Whether a request that could not go async was logged, once for the application. */
	private static volatile boolean syncWaitLogged;

	private final RateLimitPipeline pipeline;

	/** The checks that made the request wait. */
	private final List<Check> step;

	private final AtomicBoolean over = new AtomicBoolean();

	private ParkedTurn(RateLimitPipeline pipeline, List<Check> step) {
		this.pipeline = pipeline;
		this.step = step;
	}

	/**
	 * Parks a request until its turn: starts async processing on the container's own request and response
	 * (so that the resumed dispatch runs every filter after ours again), lengthens the async timeout by the
	 * wait, and asks the timer to dispatch it again.
	 * @param ended told when the container ends the request (completed, failed, timed out)
	 */
	static ParkedTurn park(HttpServletRequest request, long waitNanos, List<Check> step, RateLimitPipeline pipeline,
			AsyncListener ended) {
		ParkedTurn parked = new ParkedTurn(pipeline, step);
		AsyncContext context = request.startAsync();
		if (context.getTimeout() > 0) {
			context.setTimeout(context.getTimeout() + TimeUnit.NANOSECONDS.toMillis(waitNanos));
		}
		context.addListener(ended);
		try {
			pipeline.delay().schedule(waitNanos, () -> parked.resume(context));
		}
		catch (RuntimeException ex) {
			// A timer that fails fails open, as a store does: the request goes on now.
			logger.debug("The request delay failed to schedule a turn; the request goes on now", ex);
			parked.resume(context);
		}
		return parked;
	}

	/** Dispatches the request again, unless the container ended it first (its listener gave the turn back). */
	private void resume(AsyncContext context) {
		if (end()) {
			try {
				context.dispatch();
			}
			catch (IllegalStateException ex) {
				// The container ended the request meanwhile.
			}
		}
	}

	/** Waits on the calling thread, for a request that cannot go async. */
	static void waitOnThread(RateLimitPipeline pipeline, long nanos) {
		try {
			pipeline.delay().await(nanos);
		}
		catch (InterruptedException ex) {
			// Shutting down: the request keeps its turn and proceeds now.
			Thread.currentThread().interrupt();
		}
		finally {
			pipeline.limiter().doneWaiting();
		}
	}

	/**
	 * Whether a request that must wait can do so without its thread: only when every filter sees the async
	 * dispatch that resumes it ({@link ParkingCheck}). MockMvc has no container to dispatch it again; a multipart request's
	 * parts would be cleaned up before it resumes, and a form sent with another method than POST (or whose
	 * method a filter overrode) would lose what a filter ahead of ours read; a request that a filter or
	 * servlet without async support handles is logged once.
	 */
	static boolean mayPark(HttpServletRequest request) {
		String contentType = request.getContentType();
		if (contentType != null && contentType.regionMatches(true, 0, "multipart/", 0, 10)) {
			return false;
		}
		ServletRequest innermost = request;
		while (innermost instanceof ServletRequestWrapper wrapper) {
			innermost = wrapper.getRequest();
		}
		if (innermost.getClass().getName().startsWith("org.springframework.mock.web.")) {
			return false;
		}
		// The container dispatches its own request again, without the wrappers of filters ahead of ours:
		// Spring's FormContentFilter (the form body of a PUT, PATCH or DELETE) and HiddenHttpMethodFilter
		// (a _method override) would be lost, so the handler would miss the parameters or the method.
		if (!(innermost instanceof HttpServletRequest container) || !container.getMethod().equals(request.getMethod())
				|| (!"POST".equals(request.getMethod()) && contentType != null
						&& contentType.regionMatches(true, 0, "application/x-www-form-urlencoded", 0, 33))) {
			return false;
		}
		if (!request.isAsyncSupported()) {
			if (!syncWaitLogged) {
				syncWaitLogged = true;
				HttpServletMapping mapping = request.getHttpServletMapping();
				logger.warn("Delayed requests to the servlet '" + ((mapping != null) ? mapping.getServletName() : "?")
						+ "' wait on their threads: it does not support async processing");
			}
			return false;
		}
		return true;
	}

	/** Whether the wait is over: the turn came, or the container ended the request. */
	boolean isOver() {
		return this.over.get();
	}

	/** Ends the wait, once, and gives back the waiting place: its turn came, or the container ended the request first. */
	boolean end() {
		if (this.over.compareAndSet(false, true)) {
			this.pipeline.limiter().doneWaiting();
			return true;
		}
		return false;
	}

	/** The container ended the request before its turn: the turn is given back. */
	void giveBack() {
		this.pipeline.limiter().giveBackTurn(this.step);
	}

	/**
	 * The resumed request as the filters after ours see it while its resumed dispatch runs: a first
	 * dispatch, so that a filter that skips async dispatches (Spring Security's CSRF and authentication
	 * filters, an application's MDC filter) does its work, as for a request that was never delayed. Once
	 * that dispatch is over ({@link #dispatched}), it tells the container's own type again: an async
	 * controller's later dispatch carries this wrapper, and is no first dispatch.
	 */
	static final class ResumedRequest extends HttpServletRequestWrapper {

		private volatile boolean dispatching = true;

		ResumedRequest(HttpServletRequest request) {
			super(request);
		}

		@Override
		public DispatcherType getDispatcherType() {
			// A forward or include inside the resumed dispatch says so, from the container's wrapper beneath.
			DispatcherType type = super.getDispatcherType();
			return (this.dispatching && type == DispatcherType.ASYNC) ? DispatcherType.REQUEST : type;
		}

		void dispatched() {
			this.dispatching = false;
		}

	}

}
