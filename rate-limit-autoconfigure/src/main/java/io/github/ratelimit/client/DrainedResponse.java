package io.github.ratelimit.client;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.client.ClientHttpResponse;
import org.springframework.util.StreamUtils;

/**
 * A copy in memory of a response whose body has been read to the end and whose connection has been
 * released. Kept for the one case where a response that was to be discarded must be returned after
 * all: an interrupted wait. Immutable.
 */
final class DrainedResponse implements ClientHttpResponse {

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
	 * Reads the response to the end and closes it. Reading first lets the connection be reused; a
	 * body that cannot be read is kept as empty, since the response is being discarded anyway.
	 * @param response the response to drain, closed on return
	 * @return a copy of the response
	 * @throws IOException when the status cannot be read
	 */
	static DrainedResponse drain(ClientHttpResponse response) throws IOException {
		try (response) {
			byte[] body;
			try {
				body = StreamUtils.copyToByteArray(response.getBody());
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
