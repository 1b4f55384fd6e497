package io.github.ratelimit.client;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.client.ClientHttpResponse;

/**
 * A copy in memory of a response whose body has been read to the end and whose connection has been
 * released. Kept for the one case where a response that was to be discarded must be returned after
 * all: an interrupted wait. Immutable.
 */
final class DrainedResponse implements ClientHttpResponse {

	/** The most of a discarded body read and kept. */
	static final int MAX_BODY = 64 * 1024;

	private final HttpStatusCode statusCode;

	private final String statusText;

	private final HttpHeaders headers;

	private final byte[] body;

	private DrainedResponse(HttpStatusCode statusCode, String statusText, HttpHeaders headers, byte[] body) {
		this.statusCode = statusCode;
		this.statusText = statusText;
		this.headers = HttpHeaders.readOnlyHttpHeaders(HttpHeaders.copyOf(headers));
		this.body = body;
	}

	/**
	 * Reads the response to the end (at most {@value #MAX_BODY} bytes) and closes it. Reading first lets
	 * the connection be reused; a body that cannot be read is kept as empty, since the response is being
	 * discarded anyway.
	 * @param response the response to drain, closed on return
	 * @return a copy of the response
	 * @throws IOException when the status cannot be read
	 */
	static DrainedResponse drain(ClientHttpResponse response) throws IOException {
		try (response) {
			byte[] body;
			try {
				// At most this much: a server answering 429 with a huge body must not fill the heap. Beyond it the
				// connection is closed rather than reused.
				body = response.getBody().readNBytes(MAX_BODY);
			}
			catch (IOException ex) {
				body = new byte[0];
			}
			return new DrainedResponse(response.getStatusCode(), response.getStatusText(), response.getHeaders(),
					body);
		}
	}

	@Override
	public HttpStatusCode getStatusCode() {
		return this.statusCode;
	}

	@Override
	public String getStatusText() {
		return this.statusText;
	}

	@Override
	public HttpHeaders getHeaders() {
		return this.headers;
	}

	@Override
	public InputStream getBody() {
		return new ByteArrayInputStream(this.body);
	}

	@Override
	public void close() {
	}

}
