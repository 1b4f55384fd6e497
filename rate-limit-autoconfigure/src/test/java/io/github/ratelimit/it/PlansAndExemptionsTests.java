package io.github.ratelimit.it;

import java.net.http.HttpResponse;
import java.util.Map;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import jakarta.servlet.http.HttpServletRequest;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.ratelimit.plans.BusinessController;
import io.github.ratelimit.testsupport.Http;
import io.github.ratelimit.web.KeyResolver;

import static io.github.ratelimit.it.RateLimitEndToEndTests.header;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Plans (a request's plan picks its limit, one budget per key whatever the plan) and exemptions,
 * through a running server.
 */
@SpringBootTest(classes = { TestApplication.class, PlansAndExemptionsTests.Plans.class, BusinessController.class },
		webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "rate-limit.policies.api.limit=2", "rate-limit.policies.api.period=1m",
				"rate-limit.policies.api.key=header:X-Api-Key", "rate-limit.policies.api.plan=header:X-Plan",
				"rate-limit.policies.api.plans.pro.limit=4", "rate-limit.policies.api.exempt-when=param('probe') == 'yes'",
				"rate-limit.rules[0].path=/biz/api", "rate-limit.rules[0].policies=api",
				"rate-limit.policies.partnered.limit=1", "rate-limit.policies.partnered.period=1m",
				"rate-limit.policies.partnered.key=header:X-Api-Key", "rate-limit.policies.partnered.plan=@planOfApiKey",
				"rate-limit.policies.partnered.plans.partner.limit=3", "rate-limit.policies.partnered.plans.partner.period=1h",
				"rate-limit.policies.probed.limit=1", "rate-limit.policies.probed.period=1m",
				"rate-limit.policies.probed.exempt-when=header('X-Probe').length() > 3",
				"rate-limit.policies.watched.limit=100", "rate-limit.policies.watched.period=1m",
				"rate-limit.rules[1].path=/biz/probed", "rate-limit.rules[1].policies=watched",
				"rate-limit.exempt.when=header('X-Internal') == 'yes'" })
class PlansAndExemptionsTests {

	@LocalServerPort
	int port;

	@Autowired
	MeterRegistry meters;

	Http http;

	@BeforeEach
	void client() {
		this.http = new Http(this.port);
	}

	@Test
	void aPlanPicksTheLimitAndHeadersShowItUnderThePolicysName() {
		HttpResponse<String> free = this.http.get("/biz/api", "X-Api-Key", "free-client");
		assertThat(free.statusCode()).isEqualTo(200);
		assertThat(header(free, "RateLimit-Policy")).isEqualTo("\"api\";q=2;w=60");
		assertThat(header(free, "X-RateLimit-Limit")).isEqualTo("2");
		for (int remaining = 3; remaining >= 0; remaining--) {
			HttpResponse<String> pro = this.http.get("/biz/api", "X-Api-Key", "pro-client", "X-Plan", "pro");
			assertThat(pro.statusCode()).isEqualTo(200);
			assertThat(header(pro, "RateLimit-Policy")).isEqualTo("\"api\";q=4;w=60");
			assertThat(header(pro, "RateLimit")).startsWith("\"api\";r=" + remaining + ";");
		}
		HttpResponse<String> rejected = this.http.get("/biz/api", "X-Api-Key", "pro-client", "X-Plan", "pro");
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(rejected.body()).contains("\"violated-policies\":[\"api\"]");
	}

	@Test
	void switchingPlansNeverBuysASecondBudget() {
		// An attacker spends the free budget, then names a bigger plan, then an unknown one, then none.
		assertThat(this.http.get("/biz/api", "X-Api-Key", "mallory").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/biz/api", "X-Api-Key", "mallory").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/biz/api", "X-Api-Key", "mallory").statusCode()).isEqualTo(429);
		HttpResponse<String> pro = this.http.get("/biz/api", "X-Api-Key", "mallory", "X-Plan", "pro");
		assertThat(pro.statusCode()).as("judged by pro, with the 2 spent on free").isEqualTo(200);
		assertThat(header(pro, "RateLimit")).startsWith("\"api\";r=1;");
		assertThat(this.http.get("/biz/api", "X-Api-Key", "mallory", "X-Plan", "pro").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/biz/api", "X-Api-Key", "mallory", "X-Plan", "pro").statusCode())
			.as("exactly 2 more").isEqualTo(429);
		HttpResponse<String> unknown = this.http.get("/biz/api", "X-Api-Key", "mallory", "X-Plan", "platinum");
		assertThat(unknown.statusCode()).isEqualTo(429);
		assertThat(header(unknown, "RateLimit-Policy")).as("an unknown plan gets the policy's own").isEqualTo("\"api\";q=2;w=60");
		assertThat(this.http.get("/biz/api", "X-Api-Key", "mallory").statusCode()).isEqualTo(429);
		assertThat(this.http.get("/biz/api", "X-Api-Key", "mallory", "X-Plan", " pro ").statusCode()).isEqualTo(429);
	}

	@Test
	void aBeanMapsTheApiKeyToItsPlanForAnAnnotatedEndpoint() {
		for (int i = 0; i < 3; i++) {
			HttpResponse<String> partner = this.http.get("/biz/partner", "X-Api-Key", "key-of-acme");
			assertThat(partner.statusCode()).isEqualTo(200);
			assertThat(header(partner, "RateLimit-Policy")).isEqualTo("\"partnered\";q=3;w=3600");
		}
		assertThat(this.http.get("/biz/partner", "X-Api-Key", "key-of-acme").statusCode()).isEqualTo(429);
		// The client's own word does not make it a partner: only the bean decides.
		assertThat(this.http.get("/biz/partner", "X-Api-Key", "someone", "X-Plan", "partner").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/biz/partner", "X-Api-Key", "someone", "X-Plan", "partner").statusCode()).isEqualTo(429);
	}

	@Test
	void aPlanResolverThatThrowsRefusesTheRequestWithA400NeverA500() {
		// The policy's own limit would let a client that makes the lookup fail choose its plan.
		HttpResponse<String> broken = this.http.get("/biz/partner", "X-Api-Key", "key-the-lookup-fails-on");
		assertThat(broken.statusCode()).isEqualTo(400);
		assertThat(broken.body()).contains("'partnered'");
		assertThat(broken.headers().firstValue("RateLimit-Policy")).isEmpty();
	}

	@Test
	void metricsTagThePolicyOnlyWhateverThePlan() {
		this.http.get("/biz/api", "X-Api-Key", "tagged", "X-Plan", "pro");
		this.http.get("/biz/api", "X-Api-Key", "tagged-too", "X-Plan", "no-such-plan-" + System.nanoTime());
		for (Meter meter : this.meters.find("ratelimit.decisions").tag("policy", "api").meters()) {
			assertThat(meter.getId().getTags()).extracting(Tag::getKey).containsExactlyInAnyOrder("policy", "outcome");
		}
		// Only the policies' names ever tag a meter: never a plan's, nor a name the client wrote.
		assertThat(this.meters.find("ratelimit.decisions").meters()).isNotEmpty()
			.allSatisfy((meter) -> assertThat(meter.getId().getTag("policy")).isIn("api", "partnered", "probed", "watched"));
	}

	@Test
	void anExemptRequestSpendsNothingCarriesNoHeaderAndIsCounted() {
		double before = exempt("api");
		for (int i = 0; i < 5; i++) {
			HttpResponse<String> internal = this.http.get("/biz/api", "X-Api-Key", "internal", "X-Internal", "yes");
			assertThat(internal.statusCode()).isEqualTo(200);
			assertThat(internal.headers().map().keySet())
				.noneMatch((name) -> name.toLowerCase().contains("ratelimit") || name.equalsIgnoreCase("retry-after"));
		}
		assertThat(exempt("api") - before).isEqualTo(5);
		// The same client, not exempt, still has its whole budget.
		HttpResponse<String> outside = this.http.get("/biz/api", "X-Api-Key", "internal");
		assertThat(header(outside, "X-RateLimit-Remaining")).isEqualTo("1");
	}

	@Test
	void aPolicysOwnExemptionAppliesToItOnly() {
		for (int i = 0; i < 4; i++) {
			assertThat(this.http.get("/biz/api?probe=yes", "X-Api-Key", "prober").statusCode()).isEqualTo(200);
		}
		assertThat(this.http.get("/biz/api", "X-Api-Key", "prober").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/biz/api", "X-Api-Key", "prober").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/biz/api?probe=yes&probe=no", "X-Api-Key", "prober").statusCode())
			.as("the first value decides, as for keys").isEqualTo(200);
		assertThat(this.http.get("/biz/api?probe=no", "X-Api-Key", "prober").statusCode()).isEqualTo(429);
	}

	@Test
	void aRequestExemptFromOneOfItsPoliciesCarriesTheOthersHeadersOnly() {
		double before = exempt("probed");
		for (int i = 0; i < 3; i++) {
			HttpResponse<String> probe = this.http.get("/biz/probed", "X-Probe", "monitor", "X-Forwarded-For", "10.9.9.9");
			assertThat(probe.statusCode()).isEqualTo(200);
			assertThat(header(probe, "RateLimit-Policy")).isEqualTo("\"watched\";q=100;w=60");
			assertThat(header(probe, "RateLimit")).startsWith("\"watched\";");
		}
		assertThat(exempt("probed") - before).isEqualTo(3);
	}

	@Test
	void anExemptionThatThrowsRefusesTheRequestWithA400NeverA500() {
		// No X-Probe header: header('X-Probe').length() fails on null (header('X-Probe')?.length() would not).
		assertThat(this.http.get("/biz/probed", "X-Forwarded-For", "1.2.3.4").statusCode()).isEqualTo(400);
		assertThat(this.http.get("/biz/probed").statusCode()).isEqualTo(400);
		assertThat(this.http.get("/biz/probed", "X-Probe", "long-enough").statusCode()).isEqualTo(200);
	}

	private double exempt(String policy) {
		var counter = this.meters.find("ratelimit.decisions").tag("policy", policy).tag("outcome", "exempt").counter();
		return (counter != null) ? counter.count() : 0;
	}

	@Configuration(proxyBeanMethods = false)
	static class Plans {

		private static final Map<String, String> PLAN_BY_API_KEY = Map.of("key-of-acme", "partner");

		/** The recommended way: the plan comes from a trusted lookup of the API key, not from the client. */
		@Bean
		KeyResolver planOfApiKey() {
			return (HttpServletRequest request) -> {
				String apiKey = request.getHeader("X-Api-Key");
				if ("key-the-lookup-fails-on".equals(apiKey)) {
					throw new IllegalStateException("the customer database is away");
				}
				return (apiKey != null) ? PLAN_BY_API_KEY.get(apiKey) : null;
			};
		}

	}
}
