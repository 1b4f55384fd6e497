package io.github.ratelimit.web.servlet;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import io.github.ratelimit.web.key.UnreadableRequestException;

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
		String policy = ex.policy();
		String detail = ((policy != null) ? "Rate limit '" + policy + "'" : "The rate limit exemption")
				+ " cannot be applied to this request: " + ex.reason() + ".";
		StringBuilder json = new StringBuilder(256).append("{\"type\":\"about:blank\",\"title\":\"Bad Request\",")
			.append("\"status\":400,\"detail\":");
		string(json, detail);
		String uri = request.getRequestURI();
		if (uri != null) {
			json.append(",\"instance\":");
			string(json, uri);
		}
		byte[] body = json.append('}').toString().getBytes(StandardCharsets.UTF_8);
		response.setStatus(HttpServletResponse.SC_BAD_REQUEST);
		response.setHeader("Cache-Control", "no-store");
		response.setContentType("application/problem+json");
		response.setContentLength(body.length);
		response.getOutputStream().write(body);
	}

	private static void string(StringBuilder json, String value) {
		json.append('"');
		for (int i = 0; i < value.length(); i++) {
			char c = value.charAt(i);
			if (c == '"' || c == '\\') {
				json.append('\\').append(c);
			}
			else if (c < 0x20 || c == '\u2028' || c == '\u2029') {
				json.append(String.format("\\u%04x", (int) c));
			}
			else {
				json.append(c);
			}
		}
		json.append('"');
	}
}
