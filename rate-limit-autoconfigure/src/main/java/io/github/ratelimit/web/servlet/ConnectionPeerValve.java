package io.github.ratelimit.web.servlet;

import java.io.IOException;

import jakarta.servlet.ServletException;
import org.apache.catalina.Container;
import org.apache.catalina.Context;
import org.apache.catalina.Engine;
import org.apache.catalina.connector.Request;
import org.apache.catalina.connector.Response;
import org.apache.catalina.valves.ValveBase;
import org.jspecify.annotations.Nullable;

import io.github.ratelimit.web.clientip.ClientIpResolver;

/**
 * Records the connection's peer address, and the forwarding header as the client sent it, before
 * any other valve of the engine runs: Tomcat's {@code RemoteIpValve} (which Spring Boot adds for
 * {@code server.forward-headers-strategy=native}, and on cloud platforms by default) overwrites
 * {@code getRemoteAddr()} and rewrites {@code X-Forwarded-For} before any filter sees the request.
 * The {@link ClientIpResolver} reads what was recorded, so its own trust decides. Thread-safe.
 */
final class ConnectionPeerValve extends ValveBase {

	private final @Nullable String header;

	/**
	 * Creates the valve.
	 * @param header the forwarding header to record, {@code null} to record none
	 */
	ConnectionPeerValve(@Nullable String header) {
		super(true);
		this.header = header;
	}

	@Override
	public void invoke(Request request, Response response) throws IOException, ServletException {
		request.setAttribute(ClientIpResolver.PEER_ADDRESS_ATTRIBUTE, request.getRemoteAddr());
		if (this.header != null) {
			// Recorded as absent too, so that a header a later valve adds is not taken as the client's.
			request.setAttribute(ClientIpResolver.FORWARDING_HEADER_ATTRIBUTE,
					ClientIpResolver.lastValues(request.getHeaders(this.header)));
		}
		getNext().invoke(request, response);
	}

	/**
	 * Returns whether this valve is the first of the pipeline of the engine that holds a context, so
	 * that no other valve of the engine ran before it.
	 * @param context the context
	 * @return {@code true} if it comes first
	 */
	boolean isFirstIn(Context context) {
		Container container = context;
		while (container != null && !(container instanceof Engine)) {
			container = container.getParent();
		}
		return container != null && container.getPipeline().getFirst() == this;
	}

}
