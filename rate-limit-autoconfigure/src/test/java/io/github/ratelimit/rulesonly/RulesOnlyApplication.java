package io.github.ratelimit.rulesonly;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.web.servlet.ServletRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

/**
 * An application limited by path rules alone: no {@code @RateLimited} anywhere. It also runs a servlet
 * of its own next to Spring MVC's.
 */
@SpringBootApplication
public class RulesOnlyApplication {

	static final AtomicInteger legacyCalls = new AtomicInteger();

	@Bean
	SecurityFilterChain securityFilterChain(HttpSecurity http) throws Exception {
		return http.authorizeHttpRequests((requests) -> requests.anyRequest().permitAll())
			.csrf((csrf) -> csrf.disable())
			.build();
	}

	@Bean
	ServletRegistrationBean<HttpServlet> legacyServlet() {
		HttpServlet servlet = new HttpServlet() {
			@Override
			protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
				legacyCalls.incrementAndGet();
				response.getWriter().write("legacy");
			}
		};
		return new ServletRegistrationBean<>(servlet, "/legacy/*");
	}

	@RestController
	static class ItemController {

		@GetMapping("/items/{id}")
		String item(@PathVariable String id) {
			return id;
		}

		@GetMapping("/scan/known")
		String known() {
			return "known";
		}

		@GetMapping("/fail/ok")
		String ok() {
			return "ok";
		}

		@GetMapping("/fail/send-error")
		void sendError(HttpServletResponse response) throws IOException {
			response.sendError(400);
		}

		@GetMapping("/fail/throw")
		String fail() {
			throw new IllegalStateException("boom");
		}

	}
}
