package io.github.ratelimit.web.servlet;

import java.io.IOException;
import java.net.InetAddress;
import java.security.Principal;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import java.util.Map;

import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.Part;
import org.jspecify.annotations.Nullable;

import org.springframework.http.server.PathContainer;
import org.springframework.http.server.RequestPath;
import org.springframework.web.servlet.HandlerMapping;
import org.springframework.web.util.ServletRequestPathUtils;

import io.github.ratelimit.web.clientip.ClientIpResolver;
import io.github.ratelimit.web.clientip.ServletClientIps;
import io.github.ratelimit.web.key.LimitedRequest;
import io.github.ratelimit.web.key.UnreadableRequestException;

/**
 * A servlet request as the limiter reads it. Its parameters are read once, by the first reader: a container
 * may fail to decode them ({@code %FF} in a UTF-8 form, {@code %ZZ}, more than its {@code maxParameterCount}),
 * and Tomcat throws only from the call that makes it parse them, every later call returning the parameters
 * before the bad byte. So {@link #unreadableParameters} makes it parse them and remembers the failure on the
 * request, and the request a resolver bean or an expression gets refuses to give any then. The path within
 * the application is the one the dispatcher parsed, when it has. Public for the limiter's packages and
 * tests, not an API.
 */
public final class ServletRequestView extends LimitedRequest {

	private static final String PARAMETERS_ATTRIBUTE = ServletRequestView.class.getName() + ".parameters";

	/** What the attribute holds for parameters read without a failure. */
	private static final String READABLE = "";

	private final HttpServletRequest request;

	/** The request whose parameters are read: the one the limiter's filter saw (a later filter may hide a form's). */
	private final HttpServletRequest parameters;

	private final ClientIpResolver clientIpResolver;

	private @Nullable PathContainer path;

	/**
	 * Creates the view of a request.
	 * @param request the request, as the code that decides it sees it
	 * @param clientIpResolver finds its client IP
	 */
	public ServletRequestView(HttpServletRequest request, ClientIpResolver clientIpResolver) {
		this(request, request, clientIpResolver);
	}

	/**
	 * Creates the view of a request whose parameters are read from the request as an earlier filter saw it
	 * (Spring Cloud Gateway's {@code FormFilter} hides a form's fields from the requests after it).
	 * @param request the request, as the code that decides it sees it
	 * @param parameters the request whose parameters are read
	 * @param clientIpResolver finds its client IP
	 */
	ServletRequestView(HttpServletRequest request, HttpServletRequest parameters, ClientIpResolver clientIpResolver) {
		this.request = request;
		this.parameters = parameters;
		this.clientIpResolver = clientIpResolver;
	}

	@Override
	public String method() {
		return this.request.getMethod();
	}

	/**
	 * The path within the application, servlet path included (whichever servlet serves it): the one the
	 * dispatcher parsed when it has, else parsed here (and not left on the request).
	 */
	@Override
	public PathContainer pathWithinApplication() {
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
	public @Nullable Principal principal() {
		return this.request.getUserPrincipal();
	}

	@Override
	public String clientIp() {
		return ServletClientIps.resolve(this.clientIpResolver, this.request);
	}

	@Override
	public @Nullable InetAddress clientAddress() {
		return ServletClientIps.resolveAddress(this.clientIpResolver, this.request);
	}

	@Override
	public long clientIpv4Bits() {
		return ServletClientIps.quickIpv4(this.clientIpResolver, this.request);
	}

	@Override
	public @Nullable String unreadableParameters() {
		Object known = this.request.getAttribute(PARAMETERS_ATTRIBUTE);
		if (known instanceof String reason) {
			return reason.isEmpty() ? null : reason;
		}
		String reason = READABLE;
		try {
			this.parameters.getParameterMap();
		}
		catch (RuntimeException ex) {
			// Tomcat's InvalidParameterException (an IllegalStateException), or another container's.
			reason = "its parameters cannot be decoded";
		}
		this.request.setAttribute(PARAMETERS_ATTRIBUTE, reason);
		return reason.isEmpty() ? null : reason;
	}

	@Override
	protected List<String> parameterValues(String name) {
		String[] values = this.parameters.getParameterValues(name);
		return (values != null) ? Arrays.asList(values) : List.of();
	}

	@Override
	protected boolean isFilePart(String name, String origin) {
		Collection<Part> parts;
		try {
			parts = this.parameters.getParts();
		}
		catch (IllegalStateException ex) {
			// No multipart configuration: no part is read as a value either.
			return false;
		}
		catch (IOException | ServletException | RuntimeException ex) {
			throw new UnreadableRequestException(origin, "its parts cannot be read", ex);
		}
		String array = name + "[]";
		return parts.stream().anyMatch((part) -> part.getSubmittedFileName() != null
				&& (name.equals(part.getName()) || array.equals(part.getName())));
	}

	@Override
	protected @Nullable String contentType() {
		return this.parameters.getContentType();
	}

	@Override
	@SuppressWarnings("unchecked")
	public Map<String, String> pathVariables() {
		Object variables = this.request.getAttribute(HandlerMapping.URI_TEMPLATE_VARIABLES_ATTRIBUTE);
		return (variables instanceof Map<?, ?> map) ? (Map<String, String>) map : Collections.emptyMap();
	}

	@Override
	public @Nullable Object attribute(String name) {
		return this.request.getAttribute(name);
	}

	@Override
	public Object nativeRequest() {
		return (unreadableParameters() != null) ? new Guarded(this.request, this) : this.request;
	}

	@Override
	public <T> @Nullable T unwrap(Class<T> type) {
		Object request = nativeRequest();
		return type.isInstance(request) ? type.cast(request) : null;
	}

	/** A request whose parameters cannot be decoded: reading them throws, and is remembered by the view. */
	private static final class Guarded extends HttpServletRequestWrapper {

		private final ServletRequestView view;

		Guarded(HttpServletRequest request, ServletRequestView view) {
			super(request);
			this.view = view;
		}

		private UnreadableRequestException touch() {
			return this.view.unreadableParametersRead("request");
		}

		@Override
		public String getParameter(String name) {
			throw touch();
		}

		@Override
		public Map<String, String[]> getParameterMap() {
			throw touch();
		}

		@Override
		public Enumeration<String> getParameterNames() {
			throw touch();
		}

		@Override
		public String[] getParameterValues(String name) {
			throw touch();
		}

	}
}
