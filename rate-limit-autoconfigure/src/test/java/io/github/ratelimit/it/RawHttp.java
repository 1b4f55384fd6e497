package io.github.ratelimit.it;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * HTTP/1.1 as bytes: header values no client library sends (obs-text such as a no-break space, 0xA0),
 * header lines repeated as written, bodies as given. One request per connection.
 */
final class RawHttp {

	private final int port;

	RawHttp(int port) {
		this.port = port;
	}

	/**
	 * Sends a request.
	 * @param head the request line and header lines, ISO-8859-1, without the blank line; {@code Host},
	 * {@code Content-Length} and {@code Connection: close} are added
	 * @param body the body, may be empty
	 * @return the response: status line, headers and body, as ISO-8859-1
	 */
	Response send(String head, byte[] body) {
		try (Socket socket = new Socket("localhost", this.port)) {
			socket.setSoTimeout(30_000);
			OutputStream out = socket.getOutputStream();
			String full = head + "\r\nHost: localhost:" + this.port + "\r\nContent-Length: " + body.length
					+ "\r\nConnection: close\r\n\r\n";
			out.write(full.getBytes(StandardCharsets.ISO_8859_1));
			out.write(body);
			out.flush();
			InputStream in = socket.getInputStream();
			ByteArrayOutputStream response = new ByteArrayOutputStream();
			in.transferTo(response);
			return new Response(response.toString(StandardCharsets.ISO_8859_1));
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

	/** A response as text. */
	record Response(String text) {

		int status() {
			return Integer.parseInt(this.text.substring(9, 12));
		}

		String body() {
			int end = this.text.indexOf("\r\n\r\n");
			return (end >= 0) ? this.text.substring(end + 4) : "";
		}

		@Override
		public String toString() {
			return this.text;
		}

	}
}
