package io.github.ratelimit.it;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.request.MockHttpServletRequestBuilder;

import io.github.ratelimit.web.RateLimitRejectionHandler;

import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.content;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * The filter under MockMvc, with a user's own rejection response and proxies it trusts.
 */
@SpringBootTest(classes = TestApplication.class,
		properties = { "rate-limit.client-ip.trusted-proxies=10.0.0.0/8, fd00::/8", "rate-limit.headers.style=ietf" })
@AutoConfigureMockMvc
@Import(MockMvcTests.TeapotRejection.class)
class MockMvcTests {

	@Autowired
	MockMvc mvc;

	@Test
	void theUsersRejectionHandlerAnswers() throws Exception {
		this.mvc.perform(from("192.0.2.1")).andExpect(status().isOk());
		this.mvc.perform(from("192.0.2.1")).andExpect(status().isOk());
		this.mvc.perform(from("192.0.2.1")).andExpect(status().isOk());
		this.mvc.perform(from("192.0.2.1"))
			.andExpect(status().isIAmATeapot())
			.andExpect(content().string("slow down: [LimitedController.inline]"))
			.andExpect(header().string("Retry-After", "20"))
			.andExpect(header().string("RateLimit", "\"LimitedController.inline\";r=0;t=20"))
			.andExpect(header().doesNotExist("X-RateLimit-Limit"));
	}

	@Test
	void clientsBehindTrustedProxiesHaveTheirOwnBudgets() throws Exception {
		for (int i = 0; i < 2; i++) {
			this.mvc.perform(from("10.1.1.1").header("X-Forwarded-For", "198.51.100.1")).andExpect(status().isOk());
		}
		this.mvc.perform(from("10.1.1.1").header("X-Forwarded-For", "198.51.100.1")).andExpect(status().isIAmATeapot());
		// Another client behind the same proxy, reaching us through an IPv6 hop.
		this.mvc.perform(from("fd00::1").header("X-Forwarded-For", "198.51.100.2, fd00::7")).andExpect(status().isOk());
		// IPv6 clients are normalised: two spellings, one budget.
		this.mvc.perform(from("fd00::1").header("X-Forwarded-For", "2001:db8::1")).andExpect(status().isOk());
		this.mvc.perform(from("fd00::1").header("X-Forwarded-For", "2001:0db8:0:0::0001")).andExpect(status().isOk());
		this.mvc.perform(from("fd00::1").header("X-Forwarded-For", "2001:DB8::1")).andExpect(status().isIAmATeapot());
	}

	@Test
	void aFailureAnsweredWithAnErrorIsCountedWithItsHeaders() throws Exception {
		for (int remaining = 2; remaining >= 0; remaining--) {
			this.mvc.perform(post("/ops/thrown-login").param("user", "grace").param("password", "wrong"))
				.andExpect(status().isUnauthorized())
				.andExpect(header().string("RateLimit", "\"thrown-login\";r=" + remaining + ";t=20"));
		}
		this.mvc.perform(post("/ops/thrown-login").param("user", "grace").param("password", "right"))
			.andExpect(status().isIAmATeapot());
	}

	private static MockHttpServletRequestBuilder from(String remoteAddr) {
		return get(remoteAddr.startsWith("192") ? "/t/inline" : "/t/retry").with((request) -> {
			request.setRemoteAddr(remoteAddr);
			return request;
		});
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class TeapotRejection {

		@Bean
		RateLimitRejectionHandler teapot() {
			return (request, response, result) -> {
				response.setStatus(418);
				response.getWriter().write("slow down: " + result.violatedPolicies());
			};
		}

	}
}
