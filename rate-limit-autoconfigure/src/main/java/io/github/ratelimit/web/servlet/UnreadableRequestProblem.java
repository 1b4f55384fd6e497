package io.github.ratelimit.web.servlet;

import java.io.IOException;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import io.github.ratelimit.web.key.UnreadableRequestException;
import io.github.ratelimit.web.limiter.Problems;

/**
 * The answer to a request a policy cannot tell the key, plan or exemption of: {@code 400 Bad Request}
 * with {@code Cache-Control: no-store} and an RFC 9457 {@code application/problem+json} body, as the
 * {@code 429}'s. Not the rejection handler's to write: that one answers requests over a limit, and an
 * application's own handler may not expect anything else. The detail names the policy and the reason,
 * never the client's input.
 */
final class UnreadableRequestProblem {

	private UnreadableRequestProblem() {
	}

	/**
	 * Writes the answer.
	 * @param request the refused request
	 * @param response its response, not yet committed
	 * @param ex why it is refused
	 * @throws IOException when the response cannot be written
	 */
	static void write(HttpServletRequest request, HttpServletResponse response, UnreadableRequestException ex)
			throws IOException {
		byte[] body = Problems.unreadable(request.getRequestURI(), ex);
		response.setStatus(HttpServletResponse.SC_BAD_REQUEST);
		response.setHeader("Cache-Control", "no-store");
		response.setContentType("application/problem+json");
		response.setContentLength(body.length);
		response.getOutputStream().write(body);
	}
}
