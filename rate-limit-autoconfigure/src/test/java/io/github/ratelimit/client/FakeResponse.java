package io.github.ratelimit.client;

import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.client.ClientHttpResponse;

/**
 * A response that remembers whether it was closed and whether its body was read to the end.
 */
final class FakeResponse implements ClientHttpResponse {

	private final int status;

	private final HttpHeaders headers = new HttpHeaders();

	private final byte[] body;

	private boolean closed;

	private boolean bodyRead;

	private FakeResponse(int status, String body) {
		this.status = status;
		this.body = body.getBytes(StandardCharsets.UTF_8);
	}

	static FakeResponse of(int status, String... headers) {
		return withBody(status, "body " + status, headers);
	}

	static FakeResponse withBody(int status, String body, String... headers) {
		FakeResponse response = new FakeResponse(status, body);
		for (int i = 0; i < headers.length; i += 2) {
			response.headers.add(headers[i], headers[i + 1]);
		}
		return response;
	}

	@Override
	public HttpStatusCode getStatusCode() {
		return HttpStatusCode.valueOf(this.status);
	}

	@Override
	public String getStatusText() {
		return "status " + this.status;
	}

	@Override
	public HttpHeaders getHeaders() {
		return this.headers;
	}

	@Override
	public InputStream getBody() {
		ByteArrayInputStream bytes = new ByteArrayInputStream(this.body);
		// only the two read methods, so that every other way of reading goes through them
		return new InputStream() {
			@Override
			public int read() {
				return seen(bytes.read());
			}

			@Override
			public int read(byte[] b, int off, int len) {
				return seen(bytes.read(b, off, len));
			}
		};
	}

	private int seen(int read) {
		if (read == -1) {
			this.bodyRead = true;
		}
		return read;
	}

	@Override
	public void close() {
		this.closed = true;
	}

	boolean isClosed() {
		return this.closed;
	}

	boolean isBodyRead() {
		return this.bodyRead;
	}

}
