package io.github.ratelimit.web.servlet;

import jakarta.servlet.http.HttpServletResponse;

import io.github.ratelimit.web.limiter.ResponseHeaders;

/**
 * A servlet response's headers.
 * @param response the response
 */
record ServletHeaders(HttpServletResponse response) implements ResponseHeaders {

	@Override
	public void set(String name, String value) {
		this.response.setHeader(name, value);
	}

	@Override
	public void remove(String name) {
		if (this.response.containsHeader(name)) {
			// A null value removes a header in Tomcat and Jetty.
			this.response.setHeader(name, null);
		}
	}

}
