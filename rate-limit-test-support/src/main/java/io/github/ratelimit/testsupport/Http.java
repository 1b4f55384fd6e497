package io.github.ratelimit.testsupport;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * A small HTTP client for tests against a running server, on {@code localhost}; failures to connect are
 * {@link IllegalStateException}s.
 */
public final class Http {

	private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

	private final int port;

	/**
	 * Creates a client of {@code http://localhost:port}.
	 * @param port the server's port
	 */
	public Http(int port) {
		this.port = port;
	}

	/**
	 * Sends a GET.
	 * @param path e.g. {@code /api/hello?x=1}
	 * @param headers names and values, in turn
	 * @return the response
	 */
	public HttpResponse<String> get(String path, String... headers) {
		return send(builder(path, headers).GET().build());
	}

	/**
	 * Sends a HEAD.
	 * @param path the path
	 * @param headers names and values, in turn
	 * @return the response
	 */
	public HttpResponse<String> head(String path, String... headers) {
		return send(builder(path, headers).method("HEAD", HttpRequest.BodyPublishers.noBody()).build());
	}

	/**
	 * Sends an OPTIONS request (e.g. a CORS preflight).
	 * @param path the path
	 * @param headers names and values, in turn
	 * @return the response
	 */
	public HttpResponse<String> options(String path, String... headers) {
		return send(builder(path, headers).method("OPTIONS", HttpRequest.BodyPublishers.noBody()).build());
	}

	/**
	 * Sends a DELETE.
	 * @param path the path
	 * @param headers names and values, in turn
	 * @return the response
	 */
	public HttpResponse<String> delete(String path, String... headers) {
		return send(builder(path, headers).DELETE().build());
	}

	/**
	 * Sends a form POST.
	 * @param path the path
	 * @param form the body, {@code application/x-www-form-urlencoded}
	 * @param headers names and values, in turn
	 * @return the response
	 */
	public HttpResponse<String> post(String path, String form, String... headers) {
		return send(builder(path, headers).header("Content-Type", "application/x-www-form-urlencoded")
			.POST(HttpRequest.BodyPublishers.ofString(form))
			.build());
	}

	/**
	 * Sends a JSON POST, e.g. to an actuator write operation.
	 * @param path the path
	 * @param json the body, {@code application/json}
	 * @param headers names and values, in turn
	 * @return the response
	 */
	public HttpResponse<String> postJson(String path, String json, String... headers) {
		return send(builder(path, headers).header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(json))
			.build());
	}

	private HttpRequest.Builder builder(String path, String... headers) {
		HttpRequest.Builder builder = HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + path))
			.timeout(Duration.ofSeconds(30));
		for (int i = 0; i < headers.length; i += 2) {
			builder.header(headers[i], headers[i + 1]);
		}
		return builder;
	}

	private static HttpResponse<String> send(HttpRequest request) {
		try {
			return CLIENT.send(request, HttpResponse.BodyHandlers.ofString());
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}
}
