package io.github.ratelimit.web.reactive;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.security.Principal;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.server.PathContainer;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.util.ClassUtils;
import org.springframework.util.MultiValueMap;
import org.springframework.web.reactive.HandlerMapping;
import org.springframework.web.server.ServerWebExchange;

import io.github.ratelimit.web.ClientIpSource;
import io.github.ratelimit.web.clientip.ClientIpResolver;
import io.github.ratelimit.web.key.LimitedRequest;

/**
 * A WebFlux exchange as the limiter reads it. What a reactive request gives only asynchronously is read
 * before the limiter reads it ({@link #prepared}): the principal (Spring Security's included), and the fields of
 * an {@code application/x-www-form-urlencoded} body when a policy reads parameters
 * ({@code exchange.getFormData()}, which WebFlux keeps for the handler), bounded by
 * {@code spring.http.codecs.max-in-memory-size}. Its parameters are the query string's, then the form's. Its client
 * is the connection's peer (Reactor Netty's connection, not the address a forwarding header rewrote) and
 * the rules of {@code rate-limit.client-ip.*} (another server's rewriting is refused at start-up,
 * {@link ReactivePeerCheck}). Not thread-safe.
 */
final class ExchangeRequestView extends LimitedRequest {

	private static final boolean REACTOR_NETTY = ClassUtils.isPresent("reactor.netty.http.server.HttpServerRequest",
			ExchangeRequestView.class.getClassLoader());

	private final ServerWebExchange exchange;

	private final ClientIpResolver clientIps;

	private @Nullable Principal principal;

	private @Nullable MultiValueMap<String, String> form;

	private @Nullable String unreadable;

	private boolean checkedDecoding;

	private @Nullable String clientIp;

	ExchangeRequestView(ServerWebExchange exchange, ClientIpResolver clientIps) {
		this.exchange = exchange;
		this.clientIps = clientIps;
	}

	/**
	 * Reads what the limiter may ask for and WebFlux gives only asynchronously: the principal, and the form
	 * body when a policy reads parameters.
	 * @param readsParameters whether a policy may read the request's parameters
	 * @return this view, once read; an error {@link DataBufferLimitException} when the form is too large
	 */
	Mono<ExchangeRequestView> prepared(boolean readsParameters) {
		Mono<ExchangeRequestView> principal = this.exchange.getPrincipal()
			.doOnNext((found) -> this.principal = found)
			.then(Mono.just(this));
		if (!readsParameters || !isForm()) {
			return principal;
		}
		return this.exchange.getFormData()
			.doOnNext((form) -> this.form = form)
			.onErrorResume((ex) -> !(ex instanceof DataBufferLimitException), (ex) -> {
				this.unreadable = "its form body cannot be read";
				return Mono.empty();
			})
			.then(principal);
	}

	private boolean isForm() {
		MediaType type;
		try {
			type = this.exchange.getRequest().getHeaders().getContentType();
		}
		catch (RuntimeException ex) {
			return false;
		}
		return type != null && MediaType.APPLICATION_FORM_URLENCODED.isCompatibleWith(type);
	}

	@Override
	public String method() {
		return this.exchange.getRequest().getMethod().name();
	}

	@Override
	public PathContainer pathWithinApplication() {
		return this.exchange.getRequest().getPath().pathWithinApplication();
	}

	@Override
	public @Nullable String header(String name) {
		return this.exchange.getRequest().getHeaders().getFirst(name);
	}

	@Override
	public List<String> headers(String name) {
		List<String> values = this.exchange.getRequest().getHeaders().get(name);
		return (values != null) ? values : List.of();
	}

	@Override
	public @Nullable Principal principal() {
		return this.principal;
	}

	@Override
	public String clientIp() {
		String clientIp = this.clientIp;
		if (clientIp == null) {
			clientIp = this.clientIps.resolve(peer(), this::headerValues);
			this.clientIp = clientIp;
		}
		return clientIp;
	}

	@Override
	public @Nullable InetAddress clientAddress() {
		return this.clientIps.resolveAddress(peer(), this::headerValues);
	}

	private @Nullable List<String> headerValues(String name) {
		return this.exchange.getRequest().getHeaders().get(name);
	}

	/**
	 * The connection's peer: Reactor Netty's connection address, which no forwarding header rewrites
	 * ({@code server.forward-headers-strategy: native} rewrites the request's remote address, {@code framework}
	 * the request Spring hands on), else the request's remote address.
	 */
	private @Nullable String peer() {
		ServerHttpRequest request = this.exchange.getRequest();
		// The server's resolution, on purpose (rate-limit.client-ip.source=container).
		boolean container = this.clientIps.getSource() == ClientIpSource.CONTAINER;
		SocketAddress address = (REACTOR_NETTY && !container)
				? NettyPeer.of(ServerHttpRequestDecorator.getNativeRequest(request)) : null;
		if (address == null) {
			address = request.getRemoteAddress();
		}
		if (address instanceof InetSocketAddress inet) {
			return (inet.getAddress() != null) ? inet.getAddress().getHostAddress() : inet.getHostString();
		}
		return (address != null) ? address.toString() : null;
	}

	@Override
	public @Nullable String unreadableParameters() {
		if (this.unreadable == null && !this.checkedDecoding) {
			this.checkedDecoding = true;
			// WebFlux decodes bytes that are no UTF-8 (x=%FF) to U+FFFD where a servlet container refuses them:
			// refused here too, so that what a key reads is what the client sent.
			if (holdsUndecodable(this.exchange.getRequest().getQueryParams())
					|| (this.form != null && holdsUndecodable(this.form))) {
				this.unreadable = "its parameters cannot be decoded";
			}
		}
		return this.unreadable;
	}

	private static boolean holdsUndecodable(MultiValueMap<String, String> parameters) {
		for (Map.Entry<String, List<String>> parameter : parameters.entrySet()) {
			if (parameter.getKey().indexOf('\uFFFD') >= 0) {
				return true;
			}
			for (String value : parameter.getValue()) {
				if (value != null && value.indexOf('\uFFFD') >= 0) {
					return true;
				}
			}
		}
		return false;
	}

	@Override
	protected List<String> parameterValues(String name) {
		List<String> query = this.exchange.getRequest().getQueryParams().get(name);
		List<String> form = (this.form != null) ? this.form.get(name) : null;
		if (form == null || form.isEmpty()) {
			return (query != null) ? query : List.of();
		}
		if (query == null || query.isEmpty()) {
			return form;
		}
		List<String> all = new ArrayList<>(query);
		all.addAll(form);
		return all;
	}

	@Override
	protected @Nullable String contentType() {
		return this.exchange.getRequest().getHeaders().getFirst(HttpHeaders.CONTENT_TYPE);
	}

	@Override
	public Map<String, String> pathVariables() {
		Map<String, String> variables = this.exchange.getAttribute(HandlerMapping.URI_TEMPLATE_VARIABLES_ATTRIBUTE);
		return (variables != null) ? variables : Collections.emptyMap();
	}

	@Override
	public @Nullable Object attribute(String name) {
		return this.exchange.getAttribute(name);
	}

	@Override
	public Object nativeRequest() {
		return this.exchange.getRequest();
	}

	@Override
	public <T> @Nullable T unwrap(Class<T> type) {
		if (type.isInstance(this.exchange)) {
			return type.cast(this.exchange);
		}
		return type.isInstance(this.exchange.getRequest()) ? type.cast(this.exchange.getRequest()) : null;
	}

	/** Reactor Netty's own request, looked at only when Reactor Netty is on the class path. */
	private static final class NettyPeer {

		static @Nullable SocketAddress of(Object nativeRequest) {
			return (nativeRequest instanceof reactor.netty.http.server.HttpServerRequest netty)
					? netty.connectionRemoteAddress() : null;
		}

	}
}
