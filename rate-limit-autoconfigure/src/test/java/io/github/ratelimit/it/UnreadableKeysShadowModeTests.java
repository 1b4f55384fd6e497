package io.github.ratelimit.it;

import java.net.http.HttpResponse;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import io.github.ratelimit.testsupport.Http;
import io.github.ratelimit.unreadable.UnreadableKeysController;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code rate-limit.mode: shadow} never answers {@code 400}: a key, plan or exemption that cannot be told
 * falls back as if absent, and the request is counted as {@code shadow-unreadable}.
 */
@SpringBootTest(classes = { TestApplication.class, UnreadableKeysController.class, UnreadableKeysTests.Beans.class },
		webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "rate-limit.mode=shadow", "rate-limit.client-ip.trusted-proxies=127.0.0.1",
				"rate-limit.policies.uk-plan.limit=1", "rate-limit.policies.uk-plan.period=1m",
				"rate-limit.policies.uk-plan.key=header:X-Api-Key", "rate-limit.policies.uk-plan.plan=@ukPlan",
				"rate-limit.policies.uk-plan.plans.pro.limit=5",
				"rate-limit.rules[0].path=/uk/plan", "rate-limit.rules[0].policies=uk-plan",
				"rate-limit.exempt.when=header('X-Probe').length() > 3" })
class UnreadableKeysShadowModeTests {

	@LocalServerPort
	int port;

	@Autowired
	MeterRegistry meters;

	@Test
	void nothingIsRefusedButEverythingIsCounted() {
		Http http = new Http(this.port);
		for (String attacker : new String[] { "198.51.100.1", "198.51.100.2" }) {
			HttpResponse<String> login = http.post("/uk/login", "username=victim&password=guess&x=%FF", "X-Probe",
					"no", "X-Forwarded-For", attacker);
			assertThat(login.statusCode()).as("the handler's own answer").isEqualTo(401);
			assertThat(http.get("/uk/plan", "X-Api-Key", "key-the-lookup-fails-on", "X-Probe", "no",
					"X-Forwarded-For", attacker)
				.statusCode()).isEqualTo(200);
			// rate-limit.exempt.when throws without X-Probe.
			assertThat(http.get("/uk/plan", "X-Api-Key", "k", "X-Forwarded-For", attacker).statusCode()).isEqualTo(200);
		}
		assertThat(shadowUnreadable("uk-login")).isEqualTo(2);
		assertThat(shadowUnreadable("uk-plan")).isEqualTo(4);
	}

	private double shadowUnreadable(String policy) {
		Counter counter = this.meters.find("ratelimit.decisions")
			.tags("policy", policy, "outcome", "shadow-unreadable")
			.counter();
		return (counter != null) ? counter.count() : 0;
	}
}
