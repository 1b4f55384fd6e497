package io.github.ratelimit.web.key;

import java.security.Principal;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;

import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

import org.springframework.http.server.PathContainer;
import org.springframework.http.server.RequestPath;
import org.springframework.web.util.ServletRequestPathUtils;

import io.github.ratelimit.web.RateLimitRequest;
import io.github.ratelimit.web.clientip.ClientIpResolver;

/**
 * A servlet request as a {@link io.github.ratelimit.web.RequestKeyResolver} reads it. Its parameters are
 * read as {@link RequestParameters} reads them (a request whose parameters cannot be decoded refuses to
 * give any); the path within the application is the one the dispatcher parsed, when it has. Not
 * thread-safe.
 */
final class ServletRequestView implements RateLimitRequest {

	private final HttpServletRequest request;

	private final ClientIpResolver clientIpResolver;

	private @Nullable PathContainer path;

	ServletRequestView(HttpServletRequest request, ClientIpResolver clientIpResolver) {
		this.request = request;
		this.clientIpResolver = clientIpResolver;
	}

	@Override
	public String method() {
		return this.request.getMethod();
	}

	@Override
	public String path() {
		return pathWithinApplication().value();
	}

	/**
	 * The path within the application, servlet path included (whichever servlet serves it): the one the
	 * dispatcher parsed when it has, else parsed here (and not left on the request).
	 */
	private PathContainer pathWithinApplication() {
		PathContainer path = this.path;
		if (path == null) {
			// One attribute read (hasParsedRequestPath, then getParsedRequestPath, would read it twice).
			if (this.request.getAttribute(ServletRequestPathUtils.PATH_ATTRIBUTE) instanceof RequestPath parsed) {
				PathContainer within = parsed.pathWithinApplication();
				// A servlet mapped by prefix parses the path within the servlet; take the whole path then.
				if (parsed.contextPath().value().length() + within.value().length() == parsed.value().length()) {
					path = within;
				}
			}
			if (path == null) {
				path = RequestPath.parse(this.request.getRequestURI(), this.request.getContextPath()).pathWithinApplication();
			}
			this.path = path;
		}
		return path;
	}

	@Override
	public @Nullable String header(String name) {
		return this.request.getHeader(name);
	}

	@Override
	public List<String> headers(String name) {
		Enumeration<String> values = this.request.getHeaders(name);
		if (values == null) {
			// A container that does not tell the lines apart.
			String value = this.request.getHeader(name);
			return (value != null) ? List.of(value) : List.of();
		}
		return values.hasMoreElements() ? Collections.list(values) : List.of();
	}

	@Override
	public @Nullable String parameter(String name) {
		return RequestParameters.first(this.request, name, "parameter('" + name + "')");
	}

	@Override
	public @Nullable Principal principal() {
		return this.request.getUserPrincipal();
	}

	@Override
	public String clientIp() {
		return this.clientIpResolver.resolve(this.request);
	}

	@Override
	public <T> @Nullable T unwrap(Class<T> type) {
		return type.isInstance(this.request) ? type.cast(this.request) : null;
	}
}
