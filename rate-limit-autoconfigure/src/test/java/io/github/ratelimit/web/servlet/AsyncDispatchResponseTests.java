package io.github.ratelimit.web.servlet;

import java.net.http.HttpResponse;
import java.util.concurrent.Callable;

import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import io.github.ratelimit.it.TestApplication;
import io.github.ratelimit.testsupport.Http;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * On the async dispatch of a request that counts later, the filter passes on the
 * response the container dispatched (which carries the wrappers of later filters, as the request's
 * async context holds them), not its own held response: else what a later filter's response wrapper
 * does is skipped for everything the async dispatch writes.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "rate-limit.rules[0].path=/review/**", "rate-limit.rules[0].policies=review",
				"rate-limit.policies.review.limit=50", "rate-limit.policies.review.period=1m",
				"rate-limit.policies.review.count=failures" })
@Import(AsyncDispatchResponseTests.Config.class)
class AsyncDispatchResponseTests {

	@LocalServerPort
	int port;

	@Test
	void aLaterFiltersResponseWrapperSeesWhatTheAsyncDispatchWrites() {
		Http http = new Http(this.port);
		HttpResponse<String> sync = http.get("/review/sync");
		assertThat(sync.statusCode()).isEqualTo(200);
		assertThat(sync.headers().firstValue("X-Wrapped")).as("sync").hasValue("yes");
		HttpResponse<String> async = http.get("/review/async");
		assertThat(async.statusCode()).isEqualTo(200);
		assertThat(async.body()).isEqualTo("async");
		assertThat(async.headers().firstValue("X-Wrapped")).as("async").hasValue("yes");
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class Config {

		@Bean
		FilterRegistrationBean<Filter> wrappingFilter() {
			Filter filter = (ServletRequest request, ServletResponse response, FilterChain chain) -> chain
				.doFilter(request, new Wrapped((HttpServletResponse) response));
			FilterRegistrationBean<Filter> registration = new FilterRegistrationBean<>(filter);
			registration.setOrder(0);
			registration.addUrlPatterns("/review/*");
			return registration;
		}

		@Bean
		ReviewController reviewController() {
			return new ReviewController();
		}

	}

	static final class Wrapped extends HttpServletResponseWrapper {

		Wrapped(HttpServletResponse response) {
			super(response);
		}

		@Override
		public jakarta.servlet.ServletOutputStream getOutputStream() throws java.io.IOException {
			super.setHeader("X-Wrapped", "yes");
			return super.getOutputStream();
		}

		@Override
		public java.io.PrintWriter getWriter() throws java.io.IOException {
			super.setHeader("X-Wrapped", "yes");
			return super.getWriter();
		}

	}

	@RestController
	static class ReviewController {

		@GetMapping("/review/sync")
		String sync() {
			return "sync";
		}

		@GetMapping("/review/async")
		Callable<String> async() {
			return () -> "async";
		}

	}

}
