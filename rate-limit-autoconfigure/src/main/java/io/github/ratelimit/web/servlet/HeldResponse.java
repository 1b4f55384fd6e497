package io.github.ratelimit.web.servlet;

import java.io.IOException;
import java.util.function.IntConsumer;

import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import org.jspecify.annotations.Nullable;

import org.springframework.web.util.ContentCachingResponseWrapper;

/**
 * The response of a request whose policies may count only some responses: it passes everything through
 * until {@link #hold()}; from then on its body is cached until {@link #release()}, so that a client cannot
 * read the answer and send its next attempt before this one is counted. An error or a redirect is counted
 * as it is sent ({@code onAnswer}): from then on the container takes the response as committed and
 * ignores headers. Only a request that counts later pays for the copy.
 */
final class HeldResponse extends HttpServletResponseWrapper {

	private final IntConsumer onAnswer;

	private @Nullable ContentCachingResponseWrapper cache;

	HeldResponse(HttpServletResponse response, IntConsumer onAnswer) {
		super(response);
		this.onAnswer = onAnswer;
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

	private void countThen(int status, Answer answer) throws IOException {
		try {
			this.onAnswer.accept(status);
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
