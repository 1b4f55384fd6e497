package io.github.ratelimit.parked;

import java.net.http.HttpResponse;

import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServletRequest;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.annotation.Order;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.stereotype.Controller;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.ResponseBody;

import io.github.ratelimit.testsupport.Http;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Review: {@code ResumedRequest} says REQUEST for the whole resumed dispatch, forwards inside it included
 * (Tomcat inserts its forward wrapper beneath the application's wrappers, so the ResumedRequest answers
 * first). A forward after a wait is not seen as a FORWARD: Spring Security's
 * {@code dispatcherTypeMatchers(FORWARD).permitAll()} (the usual rule for views behind a forward, JSPs)
 * no longer matches, and the forwarded page is refused; the handler also sees REQUEST.
 */
@SpringBootTest(classes = ParkedApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "rate-limit.rules[0].path=/waiting/**", "rate-limit.rules[0].policies=waiting",
				"rate-limit.policies.waiting.limit=1", "rate-limit.policies.waiting.period=10ms",
				"rate-limit.policies.waiting.key=global", "rate-limit.policies.waiting.on-limit=delay",
				"rate-limit.policies.waiting.max-delay=1h", "rate-limit.delay.park=true" })
@Import({ ParkedRequestTests.Waits.class, ForwardAfterWaitTests.Forwards.class })
class ForwardAfterWaitTests {

	@LocalServerPort
	int port;

	@Autowired
	ParkedRequestTests.Waits waits;

	Http http;

	@BeforeEach
	void spendTheBurst() {
		this.http = new Http(this.port);
		this.http.get("/waiting/work");
	}

	@Test
	void internalPagesAreNotReachableDirectly() {
		assertThat(this.http.get("/internal/page").statusCode()).isIn(401, 403);
	}

	@Test
	void aForwardThatDidNotWaitReachesTheInternalPage() {
		HttpResponse<String> response = this.http.get("/plain/forward");
		assertThat(response.statusCode()).isEqualTo(200);
		assertThat(response.body()).isEqualTo("internal page, dispatched as FORWARD");
	}

	@Test
	void aForwardAfterTheWaitIsStillAForward() {
		int before = this.waits.nanos.size();
		HttpResponse<String> response = this.http.get("/waiting/forward");
		assertThat(this.waits.nanos.size()).as("it waited").isEqualTo(before + 1);
		assertThat(response.statusCode()).as("body %s", response.body()).isEqualTo(200);
		assertThat(response.body()).isEqualTo("internal page, dispatched as FORWARD");
	}

	@TestConfiguration(proxyBeanMethods = false)
	@Import(ForwardController.class)
	static class Forwards {

		@Bean
		@Order(1)
		SecurityFilterChain forwardChain(HttpSecurity http) throws Exception {
			return http.securityMatcher("/waiting/forward", "/plain/forward", "/internal/**")
				.authorizeHttpRequests((requests) -> requests.dispatcherTypeMatchers(DispatcherType.FORWARD)
					.permitAll()
					.requestMatchers("/internal/**")
					.denyAll()
					.anyRequest()
					.permitAll())
				.build();
		}

	}

	@Controller
	static class ForwardController {

		@GetMapping({ "/waiting/forward", "/plain/forward" })
		String forward() {
			return "forward:/internal/page";
		}

		@GetMapping("/internal/page")
		@ResponseBody
		String page(HttpServletRequest request) {
			return "internal page, dispatched as " + request.getDispatcherType();
		}

	}

}
