package io.github.ratelimit.testsupport;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

/**
 * A real backend for the gateway, on the JDK's HTTP server: {@code /api/login} takes a form ({@code password=right}
 * logs in, else 401) and keeps the bytes it received; {@code /api/status/N} answers N; {@code /api/flaky} answers
 * 503 and then 200, turn by turn; anything else answers 200 with its path. Counts the requests per path.
 */
public final class Backend implements AutoCloseable {

	private final HttpServer server;

	private final Map<String, AtomicInteger> hits = new ConcurrentHashMap<>();

	private final List<byte[]> bodies = new CopyOnWriteArrayList<>();

	private final AtomicInteger flaky = new AtomicInteger();

	/**
	 * Starts the backend on a free port of the loopback interface.
	 * @throws IOException when it cannot listen
	 */
	public Backend() throws IOException {
		this.server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
		this.server.createContext("/", this::handle);
		this.server.start();
	}

	/**
	 * Starts a backend, for a static field.
	 * @return the backend
	 */
	public static Backend start() {
		try {
			return new Backend();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * Returns where it listens.
	 * @return {@code http://127.0.0.1:<port>}
	 */
	public String uri() {
		return "http://127.0.0.1:" + this.server.getAddress().getPort();
	}

	/**
	 * Returns the bodies {@code /api/login} received, in order.
	 * @return the bytes of each
	 */
	public List<byte[]> bodies() {
		return this.bodies;
	}

	/**
	 * Returns how many requests a path received.
	 * @param path the path
	 * @return the count
	 */
	public int hits(String path) {
		AtomicInteger count = this.hits.get(path);
		return (count != null) ? count.get() : 0;
	}

	private void handle(HttpExchange exchange) throws IOException {
		String path = exchange.getRequestURI().getPath();
		byte[] body = exchange.getRequestBody().readAllBytes();
		this.hits.computeIfAbsent(path, (key) -> new AtomicInteger()).incrementAndGet();
		int status = 200;
		String answer = path;
		if (path.equals("/api/login")) {
			this.bodies.add(body);
			boolean right = new String(body, StandardCharsets.UTF_8).contains("password=right");
			status = right ? 200 : 401;
			answer = right ? "welcome" : "wrong password";
		}
		else if (path.startsWith("/api/status/")) {
			status = Integer.parseInt(path.substring("/api/status/".length()));
		}
		else if (path.equals("/api/flaky")) {
			status = (this.flaky.getAndIncrement() % 2 == 0) ? 503 : 200;
		}
		byte[] bytes = answer.getBytes(StandardCharsets.UTF_8);
		exchange.sendResponseHeaders(status, bytes.length);
		try (OutputStream out = exchange.getResponseBody()) {
			out.write(bytes);
		}
	}

	@Override
	public void close() {
		this.server.stop(0);
	}

}
