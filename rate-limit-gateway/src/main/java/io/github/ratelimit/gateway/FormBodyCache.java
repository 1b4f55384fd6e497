package io.github.ratelimit.gateway;

import java.util.Map;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.core.Ordered;
import org.springframework.core.ResolvableType;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.MediaType;
import org.springframework.http.codec.FormHttpMessageReader;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.util.LinkedMultiValueMap;
import org.springframework.util.MultiValueMap;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.ServerWebExchangeDecorator;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

/**
 * Lets a gateway read a form's fields and still forward its body: WebFlux reads {@code getFormData()} from the
 * body, which then is gone for the backend. A form post's exchange is decorated so that the first read of its
 * fields (a {@code param:} key's) keeps the body's bytes, at most {@code spring.http.codecs.max-in-memory-size}
 * (256 KiB by default; over it the form cannot be read, and the limiter answers 413), and the body forwarded to
 * the backend is then those bytes, as they came. A form whose fields nobody reads streams through untouched.
 * First of the filters, so that the limiter's filter sees the decorated exchange. Stateless.
 */
final class FormBodyCache implements WebFilter, Ordered {

	private static final ResolvableType FORM = ResolvableType.forClassWithGenerics(MultiValueMap.class, String.class,
			String.class);

	private final FormHttpMessageReader reader;

	FormBodyCache(FormHttpMessageReader reader) {
		this.reader = reader;
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
		MediaType type;
		try {
			type = exchange.getRequest().getHeaders().getContentType();
		}
		catch (RuntimeException ex) {
			type = null;
		}
		if (type == null || !MediaType.APPLICATION_FORM_URLENCODED.isCompatibleWith(type)) {
			return chain.filter(exchange);
		}
		return chain.filter(new FormExchange(exchange, this.reader));
	}

	@Override
	public int getOrder() {
		return Ordered.HIGHEST_PRECEDENCE;
	}

	/** A form post whose fields, once read, leave its body's bytes for whoever reads the body next. */
	private static final class FormExchange extends ServerWebExchangeDecorator {

		private final KeptBody request;

		private final Mono<MultiValueMap<String, String>> form;

		FormExchange(ServerWebExchange delegate, FormHttpMessageReader reader) {
			super(delegate);
			this.request = new KeptBody(delegate.getRequest(), reader.getMaxInMemorySize());
			this.form = Mono.defer(() -> reader.readMono(FORM, this.request.keep(), Map.of()))
				.map((fields) -> (MultiValueMap<String, String>) fields)
				// An empty body is an empty form, as WebFlux's own exchange says.
				.switchIfEmpty(Mono.fromSupplier(LinkedMultiValueMap::new))
				.cache();
		}

		@Override
		public ServerHttpRequest getRequest() {
			return this.request;
		}

		@Override
		public Mono<MultiValueMap<String, String>> getFormData() {
			return this.form;
		}

	}

	/** A request whose body, once kept, is read from the kept bytes, as often as asked. */
	private static final class KeptBody extends ServerHttpRequestDecorator {

		private final int maxBytes;

		private volatile @Nullable Mono<byte[]> kept;

		KeptBody(ServerHttpRequest delegate, int maxBytes) {
			super(delegate);
			this.maxBytes = maxBytes;
		}

		/** Keeps the body's bytes from now on (bounded), and returns this request to read them from. */
		ServerHttpRequest keep() {
			if (this.kept == null) {
				this.kept = DataBufferUtils.join(super.getBody(), this.maxBytes).map((joined) -> {
					byte[] bytes = new byte[joined.readableByteCount()];
					joined.read(bytes);
					DataBufferUtils.release(joined);
					return bytes;
				}).cache();
			}
			return this;
		}

		@Override
		public Flux<DataBuffer> getBody() {
			Mono<byte[]> bytes = this.kept;
			if (bytes == null) {
				return super.getBody();
			}
			return bytes.map((read) -> (DataBuffer) DefaultDataBufferFactory.sharedInstance.wrap(read)).flux();
		}

	}

}
