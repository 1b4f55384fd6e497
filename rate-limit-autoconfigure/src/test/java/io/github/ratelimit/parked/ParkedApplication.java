package io.github.ratelimit.parked;

import java.io.IOException;
import java.security.Principal;
import java.util.concurrent.Callable;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.boot.web.servlet.ServletRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RequestAttribute;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * An application whose requests under {@code /waiting/} are delayed (path rule, delay mode), behind
 * Spring Security with HTTP basic, a form login with CSRF, and a filter of the application's own placed
 * after the limiter.
 */
@SpringBootApplication
public class ParkedApplication {

	/** The request attribute the application's own filter sets around the handler. */
	static final String TENANT = "tenant";

	@Bean
	SecurityFilterChain securityFilterChain(HttpSecurity http) throws Exception {
		return http.authorizeHttpRequests((requests) -> requests.requestMatchers("/waiting/me").authenticated()
			.anyRequest()
			.permitAll()).httpBasic(Customizer.withDefaults()).formLogin(Customizer.withDefaults())
			.csrf((csrf) -> csrf.ignoringRequestMatchers("/waiting/form"))
			.build();
	}

	@Bean
	InMemoryUserDetailsManager users() {
		return new InMemoryUserDetailsManager(User.withUsername("alice").password("{noop}secret").roles("USER").build());
	}

	/** The application's own filter, after the limiter (and after Spring Security): an MDC or tenant filter. */
	@Bean
	FilterRegistrationBean<OncePerRequestFilter> tenantFilter() {
		OncePerRequestFilter filter = new OncePerRequestFilter() {

			@Override
			protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
					throws ServletException, IOException {
				request.setAttribute(TENANT, "acme");
				try {
					chain.doFilter(request, response);
				}
				finally {
					request.removeAttribute(TENANT);
				}
			}

		};
		FilterRegistrationBean<OncePerRequestFilter> registration = new FilterRegistrationBean<>(filter);
		registration.setOrder(0);
		return registration;
	}

	/**
	 * A filter of the application's own, ahead of the limiter and without async support, on the requests
	 * of the servlet below: they cannot go async.
	 */
	@Bean
	FilterRegistrationBean<OncePerRequestFilter> syncFilter() {
		OncePerRequestFilter filter = new OncePerRequestFilter() {

			@Override
			protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
					throws ServletException, IOException {
				chain.doFilter(request, response);
			}

		};
		FilterRegistrationBean<OncePerRequestFilter> registration = new FilterRegistrationBean<>(filter);
		registration.setOrder(-200);
		registration.setAsyncSupported(false);
		registration.addUrlPatterns("/sync/*");
		return registration;
	}

	/** A servlet of the application's own, registered without async support. */
	@Bean
	ServletRegistrationBean<HttpServlet> syncServlet() {
		HttpServlet servlet = new HttpServlet() {

			@Override
			protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
				response.getWriter().write("sync");
			}

		};
		ServletRegistrationBean<HttpServlet> registration = new ServletRegistrationBean<>(servlet, "/sync/*");
		registration.setAsyncSupported(false);
		return registration;
	}

	@RestController
	static class WaitingController {

		@GetMapping("/waiting/work")
		String work(@RequestAttribute(name = TENANT, required = false) @Nullable String tenant) {
			return "work for " + tenant;
		}

		/** A form sent with PUT: its parameters are the body's, read by Spring's FormContentFilter. */
		@PutMapping("/waiting/form")
		String form(@RequestParam String name) {
			return "form " + name;
		}

		/** A form posted with {@code _method=DELETE}, which HiddenHttpMethodFilter turns into a DELETE. */
		@DeleteMapping("/waiting/form")
		String deleted(@RequestParam String name) {
			return "deleted " + name;
		}

		@GetMapping("/waiting/me")
		String me(Principal principal) {
			return principal.getName();
		}

		@GetMapping("/waiting/later")
		Callable<String> later() {
			return () -> "later";
		}

		@GetMapping("/ping")
		String ping() {
			return "pong";
		}

	}

}
