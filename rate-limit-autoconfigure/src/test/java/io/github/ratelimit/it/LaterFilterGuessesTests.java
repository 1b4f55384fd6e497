package io.github.ratelimit.it;

import java.io.IOException;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.filter.OncePerRequestFilter;

import io.github.ratelimit.testsupport.AtOnce;
import io.github.ratelimit.testsupport.Http;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A login answered by a filter after the rate limit filter (the application's own authentication), never
 * by a Spring MVC handler: its path rule counts failures, so it is decided before the rest of the chain,
 * and guesses, sent one by one or at once, get exactly the budget.
 */
@SpringBootTest(classes = { TestApplication.class, LaterFilterGuessesTests.LaterFilter.class },
		webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "server.tomcat.threads.max=64", "rate-limit.policies.filter-login.limit=3",
				"rate-limit.policies.filter-login.period=1m", "rate-limit.policies.filter-login.key=param:user",
				"rate-limit.policies.filter-login.count=failures", "rate-limit.rules[0].path=/filter-login",
				"rate-limit.rules[0].policies=filter-login" })
class LaterFilterGuessesTests {

	@LocalServerPort
	int port;

	Http http;

	@BeforeEach
	void client() {
		this.http = new Http(this.port);
	}

	@Test
	void guessesOneByOneAreLockedOut() {
		Map<Integer, Integer> statuses = new TreeMap<>();
		for (int i = 0; i < 10; i++) {
			statuses.merge(this.http.post("/filter-login", "user=trudy&password=guess" + i).statusCode(), 1, Integer::sum);
		}
		assertThat(statuses).containsExactlyInAnyOrderEntriesOf(Map.of(401, 3, 429, 7));
		assertThat(this.http.post("/filter-login", "user=walter&password=right").statusCode()).isEqualTo(200);
	}

	@Test
	void parallelGuessesGetExactlyTheBudget() throws Exception {
		// The admitted guesses are held in the password check until all three are in it, so the others are
		// decided while three attempts are in flight (as behind a slow password hash).
		inCheck = new CountDownLatch(3);
		Map<Integer, Integer> statuses = AtOnce.statuses(24,
				(i) -> () -> this.http.post("/filter-login", "user=mallory&password=guess&slow=true").statusCode());
		assertThat(statuses).containsExactlyInAnyOrderEntriesOf(Map.of(401, 3, 429, 21));
		assertThat(inCheck.getCount()).as("three guesses were in the check at once").isZero();
	}

	/** The guesses in the password check, counted down as they enter it. */
	static volatile CountDownLatch inCheck = new CountDownLatch(0);

	/** Checks the password of {@code POST /filter-login} itself, after the rate limit filter. */
	@Configuration(proxyBeanMethods = false)
	static class LaterFilter {

		@Bean
		FilterRegistrationBean<OncePerRequestFilter> passwordCheckingFilter() {
			FilterRegistrationBean<OncePerRequestFilter> registration = new FilterRegistrationBean<>(new OncePerRequestFilter() {

				@Override
				protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
						throws ServletException, IOException {
					if (!"/filter-login".equals(request.getRequestURI())) {
						chain.doFilter(request, response);
						return;
					}
					if (request.getParameter("slow") != null) {
						CountDownLatch latch = inCheck;
						latch.countDown();
						try {
							latch.await(10, TimeUnit.SECONDS);
						}
						catch (InterruptedException ex) {
							Thread.currentThread().interrupt();
						}
					}
					response.setStatus("right".equals(request.getParameter("password")) ? 200 : 401);
					response.getWriter().write("checked");
				}

			});
			registration.setOrder(0);
			return registration;
		}

	}

}
