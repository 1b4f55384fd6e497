package io.github.ratelimit.client;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

/**
 * A real HTTP server on a free loopback port that answers each path with a script of responses,
 * repeating the last one, and records the requests it received. Thread-safe.
 */
final class ScriptedHttpServer implements AutoCloseable {

	private final HttpServer server;

	private final Map<String, List<Supplier<Reply>>> scripts = new ConcurrentHashMap<>();

	private final Map<String, List<String>> received = new ConcurrentHashMap<>();

	ScriptedHttpServer() throws IOException {
		this.server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
		this.server.createContext("/", this::handle);
		this.server.start();
	}

	/**
	 * Scripts the answers to a path; each supplier is called when its turn comes, so that it can
	 * read the time then.
	 */
	@SafeVarargs
	final void script(String path, Supplier<Reply>... replies) {
		this.scripts.put(path, new CopyOnWriteArrayList<>(List.of(replies)));
	}

	String url(String path) {
		return "http://127.0.0.1:" + this.server.getAddress().getPort() + path;
	}

	/**
	 * Returns the requests received on a path, each as its method, a space and its body.
	 */
	List<String> received(String path) {
		return new ArrayList<>(this.received.getOrDefault(path, List.of()));
	}

	private void handle(HttpExchange exchange) throws IOException {
		try (exchange) {
			String path = exchange.getRequestURI().getPath();
			String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
			this.received.computeIfAbsent(path, (key) -> new CopyOnWriteArrayList<>())
				.add(exchange.getRequestMethod() + " " + body);
			List<Supplier<Reply>> script = this.scripts.get(path);
			if (script == null) {
				exchange.sendResponseHeaders(404, -1);
				return;
			}
			Reply reply = ((script.size() > 1) ? script.remove(0) : script.get(0)).get();
			reply.headers().forEach((name, value) -> exchange.getResponseHeaders().add(name, value));
			byte[] bytes = reply.body().replace("{body}", body).getBytes(StandardCharsets.UTF_8);
			boolean noBody = bytes.length == 0 || "HEAD".equals(exchange.getRequestMethod());
			exchange.sendResponseHeaders(reply.status(), noBody ? -1 : bytes.length);
			if (!noBody) {
				try (OutputStream out = exchange.getResponseBody()) {
					out.write(bytes);
				}
			}
		}
	}

	@Override
	public void close() {
		this.server.stop(0);
	}

	/**
	 * One scripted answer; {@code {body}} in the body is replaced by the request body.
	 */
	record Reply(int status, Map<String, String> headers, String body) {

		static Supplier<Reply> of(int status, String body, String... headers) {
			Map<String, String> map = new LinkedHashMap<>();
			for (int i = 0; i < headers.length; i += 2) {
				map.put(headers[i], headers[i + 1]);
			}
			Reply reply = new Reply(status, map, body);
			return () -> reply;
		}

	}

}
