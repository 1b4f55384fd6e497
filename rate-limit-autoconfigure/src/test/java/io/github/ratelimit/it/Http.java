package io.github.ratelimit.it;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * A small HTTP client for tests against the running server.
 */
final class Http {

	private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

	private final int port;

	Http(int port) {
		this.port = port;
	}

	HttpResponse<String> get(String path, String... headers) {
		return send(builder(path, headers).GET().build());
	}

	HttpResponse<String> head(String path, String... headers) {
		return send(builder(path, headers).method("HEAD", HttpRequest.BodyPublishers.noBody()).build());
	}

	HttpResponse<String> options(String path, String... headers) {
		return send(builder(path, headers).method("OPTIONS", HttpRequest.BodyPublishers.noBody()).build());
	}

	HttpResponse<String> delete(String path, String... headers) {
		return send(builder(path, headers).DELETE().build());
	}

	HttpResponse<String> post(String path, String form, String... headers) {
		return send(builder(path, headers).header("Content-Type", "application/x-www-form-urlencoded")
			.POST(HttpRequest.BodyPublishers.ofString(form))
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
