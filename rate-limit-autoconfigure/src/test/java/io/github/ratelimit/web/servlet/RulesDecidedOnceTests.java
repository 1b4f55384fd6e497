package io.github.ratelimit.web.servlet;

import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

import io.github.ratelimit.it.TestApplication;
import io.github.ratelimit.testsupport.Http;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Once a request's path rules were decided up front (here because a rule counts failures), only the
 * handler's own {@code @RateLimited} policies are decided at the handler: the rules are not resolved
 * again on the path the dispatcher parsed, so a request a later filter rewrote is not decided by a second
 * rule.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "rate-limit.rules[0].path=/review/a/**", "rate-limit.rules[0].policies=review-failures",
				"rate-limit.policies.review-failures.limit=50", "rate-limit.policies.review-failures.period=1m",
				"rate-limit.policies.review-failures.count=failures", "rate-limit.rules[1].path=/review/b/**",
				"rate-limit.rules[1].policies=review-b", "rate-limit.policies.review-b.limit=1",
				"rate-limit.policies.review-b.period=1m" })
@Import(RulesDecidedOnceTests.Config.class)
class RulesDecidedOnceTests {

	@LocalServerPort
	int port;

	@Test
	void rulesDecidedUpFrontAreNotResolvedAgainAtTheHandler() {
		Http http = new Http(this.port);
		for (int i = 0; i < 3; i++) {
			assertThat(http.get("/review/a/" + i).statusCode()).as("request " + i).isEqualTo(200);
		}
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class Config {

		@Bean
		FilterRegistrationBean<Filter> rewritingFilter() {
			Filter filter = (ServletRequest request, ServletResponse response, FilterChain chain) -> chain
				.doFilter(new Rewritten((HttpServletRequest) request), response);
			FilterRegistrationBean<Filter> registration = new FilterRegistrationBean<>(filter);
			registration.setOrder(0);
			registration.addUrlPatterns("/review/a/*");
			return registration;
		}

		@Bean
		RewrittenController rewrittenController() {
			return new RewrittenController();
		}

	}

	static final class Rewritten extends HttpServletRequestWrapper {

		Rewritten(HttpServletRequest request) {
			super(request);
		}

		@Override
		public String getRequestURI() {
			return super.getRequestURI().replace("/review/a/", "/review/b/");
		}

		@Override
		public StringBuffer getRequestURL() {
			return new StringBuffer(super.getRequestURL().toString().replace("/review/a/", "/review/b/"));
		}

		@Override
		public String getServletPath() {
			return super.getServletPath().replace("/review/a/", "/review/b/");
		}

	}

	@RestController
	static class RewrittenController {

		@GetMapping("/review/b/{id}")
		String b(@PathVariable String id) {
			return "b" + id;
		}

	}

}
