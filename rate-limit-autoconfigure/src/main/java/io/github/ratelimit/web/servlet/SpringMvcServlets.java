package io.github.ratelimit.web.servlet;

import java.util.HashSet;
import java.util.Map;
import java.util.Set;

import jakarta.servlet.ServletContext;
import jakarta.servlet.ServletRegistration;
import jakarta.servlet.http.HttpServletMapping;
import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

import org.springframework.util.ClassUtils;
import org.springframework.web.servlet.DispatcherServlet;

/**
 * Tells whether a request goes to a Spring MVC {@link DispatcherServlet}, where the interceptor decides it:
 * only a request mapped to a servlet known to be another one is decided up front, on path rules alone. The
 * servlets are read from the context once, on the first request. Thread-safe.
 */
final class SpringMvcServlets {

	private volatile @Nullable Set<String> otherServlets;

	boolean reach(HttpServletRequest request) {
		Set<String> others = this.otherServlets;
		if (others == null) {
			others = otherServlets(request.getServletContext());
			this.otherServlets = others;
		}
		HttpServletMapping mapping = others.isEmpty() ? null : request.getHttpServletMapping();
		return mapping == null || !others.contains(mapping.getServletName());
	}

	private static Set<String> otherServlets(@Nullable ServletContext context) {
		Set<String> others = new HashSet<>();
		try {
			if (context != null) {
				ClassLoader classLoader = context.getClassLoader();
				for (Map.Entry<String, ? extends ServletRegistration> entry : context.getServletRegistrations().entrySet()) {
					String className = entry.getValue().getClassName();
					if (className == null || !ClassUtils.isPresent(className, classLoader)
							|| !DispatcherServlet.class.isAssignableFrom(ClassUtils.resolveClassName(className, classLoader))) {
						others.add(entry.getKey());
					}
				}
			}
		}
		catch (RuntimeException ex) {
			// A container that does not list its servlets: every request goes to Spring MVC.
			return Set.of();
		}
		return Set.copyOf(others);
	}

}
