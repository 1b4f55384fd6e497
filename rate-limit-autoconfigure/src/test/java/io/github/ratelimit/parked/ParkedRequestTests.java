package io.github.ratelimit.parked;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;

import io.github.ratelimit.test.ManualClock;
import io.github.ratelimit.testsupport.Http;
import io.github.ratelimit.web.RequestDelay;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A delayed request is parked without its thread and resumed by the timer; it then reaches its handler
 * exactly as a request that was never delayed: every filter after the limiter does its work (Spring
 * Security's HTTP basic and CSRF filters, the application's own filter), with the limiter after Spring
 * Security (the default) and ahead of it. The timer here resumes a request at once (the wait it was asked
 * for is recorded), so no test waits on the wall clock.
 */
abstract class ParkedRequestTests {


	@LocalServerPort
	int port;

	@Autowired
	Waits waits;

	Http http;

	@BeforeEach
	void spendTheBurst() {
		this.http = new Http(this.port);
		// The budget is global and the clock stands still: from now on, every request waits for its turn.
		this.http.get("/waiting/work");
	}

	/** Whether the limiter runs ahead of Spring Security's filters ({@code filter-order} below -100). */
	abstract boolean aheadOfSecurity();

	@Test
	void theApplicationsOwnFilterRunsAroundTheHandlerOfAResumedRequest() {
		HttpResponse<String> response = waited(() -> this.http.get("/waiting/work"));
		assertThat(response.statusCode()).isEqualTo(200);
		assertThat(response.body()).isEqualTo("work for acme");
		assertThat(response.headers().firstValue("X-RateLimit-Limit")).hasValue("1");
	}

	@Test
	void aFormSentWithPutReachesTheHandlerWithItsParameters() {
		HttpRequest put = HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + "/waiting/form"))
			.header("Content-Type", "application/x-www-form-urlencoded")
			.PUT(HttpRequest.BodyPublishers.ofString("name=x"))
			.build();
		HttpResponse<String> response = waited(() -> send(put));
		assertThat(response.statusCode()).isEqualTo(200);
		assertThat(response.body()).isEqualTo("form x");
	}

	@Test
	void aRequestWhoseMethodAFilterOverridesReachesTheHandlerOfThatMethod() {
		// HiddenHttpMethodFilter, ahead of the limiter, reads _method (here from the query) of a POST.
		HttpRequest post = HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + "/waiting/form?_method=DELETE&name=y"))
			.header("Content-Type", "text/plain")
			.POST(HttpRequest.BodyPublishers.ofString("-"))
			.build();
		HttpResponse<String> response = waited(() -> send(post));
		assertThat(response.statusCode()).isEqualTo(200);
		assertThat(response.body()).isEqualTo("deleted y");
	}

	private static HttpResponse<String> send(HttpRequest request) {
		try {
			return HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofString());
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

	@Test
	void aWrongBasicPasswordIsRefusedAfterTheWait() {
		HttpResponse<String> response = (aheadOfSecurity() ? waited(this::wrongPassword) : wrongPassword());
		assertThat(response.statusCode()).as("Spring Security's basic filter ran").isEqualTo(401);
		assertThat(response.body()).doesNotContain("work for");
	}

	@Test
	void theRightBasicPasswordAuthenticatesTheResumedRequest() {
		HttpResponse<String> response = waited(() -> this.http.get("/waiting/me", "Authorization", basic("secret")));
		assertThat(response.statusCode()).isEqualTo(200);
		assertThat(response.body()).isEqualTo("alice");
	}

	@Test
	void aFormLoginWithoutItsCsrfTokenIsForbiddenAfterTheWait() {
		HttpResponse<String> response = (aheadOfSecurity())
				? waited(() -> this.http.post("/login", "username=alice&password=secret"))
				: this.http.post("/login", "username=alice&password=secret");
		assertThat(response.statusCode()).as("Spring Security's CSRF filter ran").isEqualTo(403);
	}

	@Test
	void anAsyncControllerAnswersAfterTheWait() {
		HttpResponse<String> response = waited(() -> this.http.get("/waiting/later"));
		assertThat(response.statusCode()).isEqualTo(200);
		assertThat(response.body()).isEqualTo("later");
	}

	private HttpResponse<String> wrongPassword() {
		return this.http.get("/waiting/work", "Authorization", basic("guess"));
	}

	/** Sends a request and asserts that it waited for its turn (it was parked, then resumed). */
	HttpResponse<String> waited(java.util.function.Supplier<HttpResponse<String>> request) {
		int before = this.waits.nanos.size();
		HttpResponse<String> response = request.get();
		assertThat(this.waits.nanos.size()).as("the request waited for its turn").isEqualTo(before + 1);
		return response;
	}

	static String basic(String password) {
		return "Basic " + Base64.getEncoder().encodeToString(("alice:" + password).getBytes(StandardCharsets.UTF_8));
	}

	/** The clock stands still; the timer records each wait and resumes the request at once. */
	@TestConfiguration(proxyBeanMethods = false)
	static class Waits implements RequestDelay {

		final List<Long> nanos = new CopyOnWriteArrayList<>();

		@Bean
		ManualClock rateLimitClock() {
			return new ManualClock();
		}

		@Override
		public void schedule(long nanos, Runnable resume) {
			this.nanos.add(nanos);
			resume.run();
		}

	}

	@SpringBootTest(classes = ParkedApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
			properties = { "rate-limit.rules[0].path=/waiting/**", "rate-limit.rules[0].policies=waiting",
					"rate-limit.rules[1].path=/login", "rate-limit.rules[1].policies=waiting",
					"rate-limit.rules[2].path=/sync/**", "rate-limit.rules[2].policies=waiting",
					"rate-limit.policies.waiting.limit=1", "rate-limit.policies.waiting.period=10ms",
					"rate-limit.policies.waiting.key=global", "rate-limit.policies.waiting.on-limit=delay",
					"rate-limit.policies.waiting.max-delay=1h", "rate-limit.delay.max-waiting=1000", "rate-limit.delay.park=true",
					"spring.mvc.hiddenmethod.filter.enabled=true" })
	@Import(Waits.class)
	@ExtendWith(OutputCaptureExtension.class)
	static class AfterSpringSecurityTests extends ParkedRequestTests {

		@Override
		boolean aheadOfSecurity() {
			return false;
		}

		@Test
		void aServletWithoutAsyncSupportWaitsOnItsThreadAndSaysSoOnce(CapturedOutput output) {
			for (int i = 0; i < 2; i++) {
				HttpResponse<String> response = waited(() -> this.http.get("/sync/x"));
				assertThat(response.statusCode()).isEqualTo(200);
				assertThat(response.body()).isEqualTo("sync");
			}
			String warning = "Delayed requests to the servlet 'syncServlet' wait on their threads";
			assertThat(output.getOut().split(warning, -1)).as("logged once").hasSize(2);
		}

	}

	@SpringBootTest(classes = ParkedApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
			properties = { "rate-limit.filter-order=-110", "rate-limit.rules[0].path=/waiting/**",
					"rate-limit.rules[0].policies=waiting", "rate-limit.rules[1].path=/login",
					"rate-limit.rules[1].policies=waiting", "rate-limit.policies.waiting.limit=1",
					"rate-limit.policies.waiting.period=10ms", "rate-limit.policies.waiting.key=global",
					"rate-limit.policies.waiting.on-limit=delay", "rate-limit.policies.waiting.max-delay=1h",
					"rate-limit.delay.max-waiting=1000", "rate-limit.delay.park=true",
					"spring.mvc.hiddenmethod.filter.enabled=true" })
	@Import(Waits.class)
	static class AheadOfSpringSecurityTests extends ParkedRequestTests {

		@Override
		boolean aheadOfSecurity() {
			return true;
		}

	}

}
