package io.github.ratelimit.web.servlet;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;

import jakarta.servlet.DispatcherType;
import jakarta.servlet.Servlet;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.mock.web.MockFilterChain;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;
import org.springframework.web.servlet.HandlerInterceptor;
import org.springframework.web.util.pattern.PathPatternParser;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.CaffeineRateLimitStore;
import io.github.ratelimit.test.ManualClock;
import io.github.ratelimit.web.CountMode;
import io.github.ratelimit.web.DecisionRecorder;
import io.github.ratelimit.web.HeaderStyle;
import io.github.ratelimit.web.OnLimit;
import io.github.ratelimit.web.ProblemDetailRejectionHandler;
import io.github.ratelimit.web.RateLimitRejectionHandler;
import io.github.ratelimit.web.RequestDelay;
import io.github.ratelimit.web.clientip.ClientIpResolver;
import io.github.ratelimit.web.key.KeyResolvers;
import io.github.ratelimit.web.limiter.RateLimitHeaders;
import io.github.ratelimit.web.limiter.RejectionLog;
import io.github.ratelimit.web.limiter.RequestLimiter;
import io.github.ratelimit.web.policy.AnnotatedEndpoints;
import io.github.ratelimit.web.policy.PathRule;
import io.github.ratelimit.web.policy.PolicyDefinition;
import io.github.ratelimit.web.policy.RateLimitExemptions;
import io.github.ratelimit.web.policy.RateLimitPolicy;
import io.github.ratelimit.web.policy.RateLimitPolicyResolver;
import io.github.ratelimit.web.policy.TestPolicies;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The filter and the interceptor together, with a servlet that stands in for the dispatcher: it calls
 * the interceptor as the dispatcher does once it has found a handler.
 */
class RateLimitFilterTests {

	private final ManualClock clock = new ManualClock();

	private final KeyResolvers keyResolvers = new KeyResolvers(ClientIpResolver.builder().build(), null);

	private final RateLimitPolicy api = policy(CountMode.ALL);

	private final RateLimitInterceptor interceptor = new RateLimitInterceptor();

	@Test
	void allowedRequestsPassWithHeadersAndRejectedOnesStop() throws Exception {
		RateLimitPipeline pipeline = pipeline(HeaderStyle.BOTH, new ProblemDetailRejectionHandler(), this.api);
		RateLimitFilter filter = new RateLimitFilter(pipeline);
		MockHttpServletResponse first = send(filter, interceptor, "/api/x");
		assertThat(first.getStatus()).isEqualTo(200);
		assertThat(first.getHeader("X-RateLimit-Remaining")).isEqualTo("1");
		assertThat(first.getHeader("X-RateLimit-Reset")).isEqualTo("5");
		assertThat(first.getHeader("RateLimit")).isEqualTo("\"api\";r=1;t=5");
		assertThat(first.getHeader("Retry-After")).isNull();
		send(filter, interceptor, "/api/x");
		Dispatcher dispatcher = new Dispatcher(interceptor);
		MockHttpServletResponse rejected = new MockHttpServletResponse();
		filter.doFilter(request("/api/x"), rejected, new MockFilterChain(dispatcher));
		assertThat(dispatcher.handled).as("the handler did not run").isZero();
		assertThat(rejected.getStatus()).isEqualTo(429);
		assertThat(rejected.getHeader("Retry-After")).isEqualTo("5");
		assertThat(rejected.getContentType()).isEqualTo("application/problem+json");
	}

	@Test
	void unmatchedRequestsPassUntouched() throws Exception {
		RateLimitPipeline pipeline = pipeline(HeaderStyle.BOTH, new ProblemDetailRejectionHandler(), this.api);
		MockHttpServletResponse response = send(new RateLimitFilter(pipeline), interceptor, "/other");
		assertThat(response.getHeaderNames()).isEmpty();
	}

	@Test
	void headerStylesWriteOnlyTheirHeadersButRetryAfterAlways() throws Exception {
		for (HeaderStyle style : HeaderStyle.values()) {
			boolean legacy = style == HeaderStyle.BOTH || style == HeaderStyle.LEGACY;
			boolean ietf = style == HeaderStyle.BOTH || style == HeaderStyle.IETF;
			RateLimitPipeline pipeline = pipeline(style, new ProblemDetailRejectionHandler(), this.api);
			RateLimitFilter filter = new RateLimitFilter(pipeline);
			send(filter, interceptor, "/api/x");
			send(filter, interceptor, "/api/x");
			MockHttpServletResponse rejected = send(filter, interceptor, "/api/x");
			assertThat(rejected.getHeader("Retry-After")).as(style.name()).isEqualTo("5");
			assertThat(rejected.containsHeader("X-RateLimit-Limit")).as(style.name()).isEqualTo(legacy);
			assertThat(rejected.containsHeader("RateLimit")).as(style.name()).isEqualTo(ietf);
			assertThat(rejected.containsHeader("RateLimit-Policy")).as(style.name()).isEqualTo(ietf);
			assertThat(rejected.containsHeader("RateLimit-Limit")).as(style.name()).isEqualTo(style == HeaderStyle.DRAFT_6);
			assertThat(rejected.containsHeader("RateLimit-Remaining")).as(style.name()).isEqualTo(style == HeaderStyle.DRAFT_6);
			assertThat(rejected.containsHeader("RateLimit-Reset")).as(style.name()).isEqualTo(style == HeaderStyle.DRAFT_6);
		}
	}

	@Test
	void aCustomRejectionHandlerWritesTheRejection() throws Exception {
		RateLimitPipeline pipeline = pipeline(HeaderStyle.BOTH, (request, response, result) -> {
			response.setStatus(503);
			response.getWriter().write("busy: " + result.violatedPolicies());
		}, this.api);
		RateLimitFilter filter = new RateLimitFilter(pipeline);
		send(filter, interceptor, "/api/x");
		send(filter, interceptor, "/api/x");
		MockHttpServletResponse rejected = send(filter, interceptor, "/api/x");
		assertThat(rejected.getStatus()).isEqualTo(503);
		assertThat(rejected.getContentAsString()).isEqualTo("busy: [api]");
		assertThat(rejected.getHeader("Retry-After")).isEqualTo("5");
	}

	@Test
	void aRequestIsDecidedOnceHoweverOftenTheDispatcherAsks() throws Exception {
		RateLimitPipeline pipeline = pipeline(HeaderStyle.BOTH, new ProblemDetailRejectionHandler(), this.api);
		RateLimitFilter filter = new RateLimitFilter(pipeline);
		// preHandle twice (a second handler mapping), then an exception resolved: still one token.
		Servlet twice = new HttpServlet() {
			@Override
			protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
				interceptor.preHandle(request, response, "handler");
				interceptor.preHandle(request, response, "handler");
				interceptor.resolveException(request, response, null, new IllegalStateException());
			}
		};
		MockHttpServletResponse response = new MockHttpServletResponse();
		filter.doFilter(request("/api/x"), response, new MockFilterChain(twice));
		assertThat(response.getHeader("X-RateLimit-Remaining")).isEqualTo("1");
	}

	@Test
	void theFilterTwiceInOneChainOrAForwardDecidesARequestOnce() throws Exception {
		RateLimitPipeline pipeline = pipeline(HeaderStyle.BOTH, new ProblemDetailRejectionHandler(), this.api);
		RateLimitFilter filter = new RateLimitFilter(pipeline);
		Dispatcher dispatcher = new Dispatcher(interceptor);
		MockHttpServletResponse twice = new MockHttpServletResponse();
		filter.doFilter(request("/api/x"), twice, new MockFilterChain(dispatcher, filter));
		assertThat(twice.getHeader("X-RateLimit-Remaining")).isEqualTo("1");
		// Forwarded (as an error page or a view would be): the forward neither decides nor opens it again.
		Servlet forwarding = new HttpServlet() {
			@Override
			protected void service(HttpServletRequest request, HttpServletResponse response)
					throws IOException, ServletException {
				MockHttpServletRequest forward = new MockHttpServletRequest("GET", "/api/x");
				forward.setRemoteAddr("203.0.113.7");
				forward.setDispatcherType(DispatcherType.FORWARD);
				filter.doFilter(forward, response, new MockFilterChain(dispatcher));
			}
		};
		MockHttpServletResponse forwarded = new MockHttpServletResponse();
		filter.doFilter(request("/api/x"), forwarded, new MockFilterChain(forwarding));
		assertThat(forwarded.getHeader("X-RateLimit-Remaining")).as("decided once, as answered")
			.isEqualTo("0");
		assertThat(send(filter, interceptor, "/api/x").getStatus()).isEqualTo(429);
		assertThat(dispatcher.handled).isEqualTo(2);
	}

	@Test
	void aRequestNoHandlerLookupSawIsCountedAsItWasAnswered() throws Exception {
		RateLimitPipeline pipeline = pipeline(HeaderStyle.BOTH, new ProblemDetailRejectionHandler(), this.api);
		RateLimitFilter filter = new RateLimitFilter(pipeline);
		// A later filter answers: the interceptor never runs.
		for (int remaining = 1; remaining >= 0; remaining--) {
			MockHttpServletResponse response = new MockHttpServletResponse();
			filter.doFilter(request("/api/x"), response, new MockFilterChain());
			assertThat(response.getHeader("X-RateLimit-Remaining")).isEqualTo(Integer.toString(remaining));
		}
		assertThat(send(filter, interceptor, "/api/x").getStatus()).as("its budget was spent").isEqualTo(429);
	}

	@Test
	void aFailedHandlerLookupIsDecidedOnRulesBeforeTheErrorIsWritten() throws Exception {
		RateLimitPipeline pipeline = pipeline(HeaderStyle.BOTH, new ProblemDetailRejectionHandler(), this.api);
		RateLimitFilter filter = new RateLimitFilter(pipeline);
		Servlet noHandler = new HttpServlet() {
			@Override
			protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
				if (interceptor.resolveException(request, response, null, new IllegalStateException("405")) == null) {
					response.sendError(405);
				}
			}
		};
		for (int i = 0; i < 2; i++) {
			MockHttpServletResponse response = new MockHttpServletResponse();
			filter.doFilter(request("/api/x"), response, new MockFilterChain(noHandler));
			assertThat(response.getStatus()).isEqualTo(405);
		}
		MockHttpServletResponse rejected = new MockHttpServletResponse();
		filter.doFilter(request("/api/x"), rejected, new MockFilterChain(noHandler));
		assertThat(rejected.getStatus()).isEqualTo(429);
	}

	@Test
	void failuresAreCountedOnceTheResponseIsKnownWithHeadersWrittenOnce() throws Exception {
		RateLimitPipeline pipeline = pipeline(HeaderStyle.BOTH, new ProblemDetailRejectionHandler(),
				policy(CountMode.FAILURES));
		RateLimitFilter filter = new RateLimitFilter(pipeline);
		MockHttpServletResponse ok = send(filter, interceptor, "/api/x", 200);
		assertThat(ok.getHeader("X-RateLimit-Remaining")).isEqualTo("2");
		assertThat(ok.getHeaders("X-RateLimit-Remaining")).hasSize(1);
		assertThat(ok.getContentAsString()).isEqualTo("handled");
		MockHttpServletResponse failed = send(filter, interceptor, "/api/x", 401);
		assertThat(failed.getHeader("X-RateLimit-Remaining")).isEqualTo("1");
		send(filter, interceptor, "/api/x", 401);
		assertThat(send(filter, interceptor, "/api/x", 200).getStatus()).isEqualTo(429);
	}

	@Test
	void stylesCombineAndDraft6SaysWhatTheLegacyHeadersSay() throws Exception {
		RateLimitPipeline pipeline = pipeline(new RateLimitHeaders(List.of(HeaderStyle.LEGACY, HeaderStyle.DRAFT_6)),
				new ProblemDetailRejectionHandler(), this.api);
		RateLimitFilter filter = new RateLimitFilter(pipeline);
		MockHttpServletResponse first = send(filter, interceptor, "/api/x");
		assertThat(first.getHeader("RateLimit-Limit")).isEqualTo("2").isEqualTo(first.getHeader("X-RateLimit-Limit"));
		assertThat(first.getHeader("RateLimit-Remaining")).isEqualTo("1")
			.isEqualTo(first.getHeader("X-RateLimit-Remaining"));
		assertThat(first.getHeader("RateLimit-Reset")).as("delta seconds until full").isEqualTo("5")
			.isEqualTo(first.getHeader("X-RateLimit-Reset"));
		assertThat(first.containsHeader("RateLimit")).isFalse();
		assertThat(first.containsHeader("RateLimit-Policy")).isFalse();
		this.clock.advance(Duration.ofSeconds(1));
		send(filter, interceptor, "/api/x");
		MockHttpServletResponse rejected = send(filter, interceptor, "/api/x");
		assertThat(rejected.getHeader("RateLimit-Remaining")).isEqualTo("0");
		assertThat(rejected.getHeader("RateLimit-Reset")).isEqualTo("9").isEqualTo(rejected.getHeader("X-RateLimit-Reset"));
		assertThat(rejected.getHeader("Retry-After")).isEqualTo("4");
	}

	@Test
	void tIsTheTimeUntilTheNextTokenAndRetryAfterNeverComesBeforeIt() throws Exception {
		RateLimitPipeline pipeline = pipeline(HeaderStyle.IETF, new ProblemDetailRejectionHandler(), this.api);
		RateLimitFilter filter = new RateLimitFilter(pipeline);
		send(filter, interceptor, "/api/x");
		this.clock.advance(Duration.ofMillis(3500));
		MockHttpServletResponse second = send(filter, interceptor, "/api/x");
		// 2 per 10 s: the first token is back in 1.5 s, the bucket is full in 6.5 s
		assertThat(second.getHeader("RateLimit")).isEqualTo("\"api\";r=0;t=2");
		MockHttpServletResponse rejected = send(filter, interceptor, "/api/x");
		assertThat(rejected.getHeader("RateLimit")).isEqualTo("\"api\";r=0;t=2");
		assertThat(rejected.getHeader("Retry-After")).isEqualTo("2");
	}

	@Test
	void corsPreflightsSpendNoBudgetButOtherOptionsRequestsDo() throws Exception {
		RateLimitPipeline pipeline = pipeline(HeaderStyle.BOTH, new ProblemDetailRejectionHandler(), this.api);
		RateLimitFilter filter = new RateLimitFilter(pipeline);
		for (int i = 0; i < 5; i++) {
			MockHttpServletRequest preflight = request("/api/x");
			preflight.setMethod("OPTIONS");
			preflight.addHeader("Origin", "https://app.example");
			preflight.addHeader("Access-Control-Request-Method", "POST");
			Dispatcher dispatcher = new Dispatcher(interceptor);
			MockHttpServletResponse response = new MockHttpServletResponse();
			filter.doFilter(preflight, response, new MockFilterChain(dispatcher));
			assertThat(dispatcher.handled).as("the preflight went on").isEqualTo(1);
			assertThat(response.getHeaderNames()).isEmpty();
		}
		MockHttpServletRequest plainOptions = request("/api/x");
		plainOptions.setMethod("OPTIONS");
		MockHttpServletResponse counted = new MockHttpServletResponse();
		filter.doFilter(plainOptions, counted, new MockFilterChain(new Dispatcher(interceptor)));
		assertThat(counted.getHeader("X-RateLimit-Remaining")).as("not a preflight: counted").isEqualTo("1");
		assertThat(send(filter, interceptor, "/api/x").getHeader("X-RateLimit-Remaining")).isEqualTo("0");
	}

	private RateLimitPolicy policy(CountMode count) {
		return TestPolicies.define(new PolicyDefinition("api", "api", "rate-limit.policies.api", false,
				Algorithm.TOKEN_BUCKET, 2L, Duration.ofSeconds(10), null, "ip", 1, OnLimit.REJECT, Duration.ZERO, count, false),
				this.keyResolvers);
	}

	private RateLimitPipeline pipeline(HeaderStyle style, RateLimitRejectionHandler rejectionHandler,
			RateLimitPolicy policy) {
		return pipeline(new RateLimitHeaders(List.of(style)), rejectionHandler, policy);
	}

	private RateLimitPipeline pipeline(RateLimitHeaders headers, RateLimitRejectionHandler rejectionHandler,
			RateLimitPolicy policy) {
		RequestLimiter limiter = new RequestLimiter(new CaffeineRateLimitStore(100, this.clock), DecisionRecorder.NONE,
				new RejectionLog(this.clock, Duration.ofMinutes(1)), false, 100, RateLimitExemptions.NONE);
		PathRule rule = new PathRule(PathPatternParser.defaultInstance.parse("/api/**"), Set.of(), List.of(policy));
		AnnotatedEndpoints none = new AnnotatedEndpoints(List::of, TestPolicies.policies(Map.of()), this.keyResolvers);
		none.afterSingletonsInstantiated();
		return new RateLimitPipeline(new RateLimitPolicyResolver(List.of(rule), List.of(none)), limiter, headers, rejectionHandler,
				RequestDelay.TIMER, false, new ParkingCheck(new DefaultListableBeanFactory(), false),
				ClientIpResolver.builder().build());
	}

	private static MockHttpServletResponse send(RateLimitFilter filter, HandlerInterceptor interceptor, String path)
			throws Exception {
		return send(filter, interceptor, path, 200);
	}

	private static MockHttpServletResponse send(RateLimitFilter filter, HandlerInterceptor interceptor, String path,
			int status) throws Exception {
		MockHttpServletResponse response = new MockHttpServletResponse();
		Dispatcher dispatcher = new Dispatcher(interceptor);
		dispatcher.status = status;
		filter.doFilter(request(path), response, new MockFilterChain(dispatcher));
		return response;
	}

	private static MockHttpServletRequest request(String path) {
		MockHttpServletRequest request = new MockHttpServletRequest("GET", path);
		request.setRemoteAddr("203.0.113.7");
		return request;
	}

	/** Found a handler: calls the interceptor, then the handler, as the dispatcher does. */
	static final class Dispatcher extends HttpServlet {

		private final HandlerInterceptor interceptor;

		int status = 200;

		int handled;

		Dispatcher(HandlerInterceptor interceptor) {
			this.interceptor = interceptor;
		}

		@Override
		protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
			try {
				if (!this.interceptor.preHandle(request, response, "handler")) {
					return;
				}
			}
			catch (Exception ex) {
				throw new IOException(ex);
			}
			this.handled++;
			response.setStatus(this.status);
			response.getWriter().write("handled");
		}

	}
}
