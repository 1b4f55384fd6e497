package io.github.ratelimit.it;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;

import io.github.ratelimit.plans.TunableController;
import io.github.ratelimit.testsupport.Http;

import static io.github.ratelimit.it.RateLimitEndToEndTests.header;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code POST /actuator/ratelimits/{policy}} changes a policy without a restart, validated as at
 * start-up; spent tokens stay spent; {@code DELETE} restores the configured values.
 */
@ExtendWith(OutputCaptureExtension.class)
@SpringBootTest(classes = { TestApplication.class, TunableController.class },
		webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "management.endpoints.web.exposure.include=ratelimits",
				"rate-limit.policies.tunable.limit=2", "rate-limit.policies.tunable.period=1h",
				"rate-limit.policies.tunable.key=header:X-Client", "rate-limit.policies.tunable.plan=header:X-Plan",
				"rate-limit.rules[0].path=/tunable", "rate-limit.rules[0].policies=tunable",
				"rate-limit.policies.costly.limit=4", "rate-limit.policies.costly.period=1h",
				"rate-limit.policies.costly.cost=2", "rate-limit.policies.costly.plan=header:X-Plan",
				"rate-limit.policies.unplanned.limit=4", "rate-limit.policies.unplanned.period=1h" })
class RuntimeChangeTests {

	private static final HttpClient CLIENT = HttpClient.newHttpClient();

	@LocalServerPort
	int port;

	Http http;

	@BeforeEach
	void client() {
		this.http = new Http(this.port);
	}

	@AfterEach
	void restore() {
		this.http.delete("/actuator/ratelimits/tunable");
	}

	@Test
	void raisingALimitFromTwoToFourGivesAClientThatSpentTwoExactlyTwoMore(CapturedOutput output) {
		assertThat(get("spender").statusCode()).isEqualTo(200);
		assertThat(get("spender").statusCode()).isEqualTo(200);
		assertThat(get("spender").statusCode()).isEqualTo(429);
		HttpResponse<String> changed = post("tunable", "{\"limit\": 4}");
		assertThat(changed.statusCode()).isEqualTo(200);
		assertThat(changed.body()).contains("\"limit\":4").contains("\"overridden\":true");
		HttpResponse<String> more = get("spender");
		assertThat(more.statusCode()).isEqualTo(200);
		assertThat(header(more, "RateLimit-Policy")).isEqualTo("\"tunable\";q=4;w=3600");
		assertThat(this.http.get("/tunable/annotated", "X-Client", "spender").statusCode())
			.as("the annotation names the same policy, changed too").isEqualTo(200);
		assertThat(get("spender").statusCode()).as("exactly two more").isEqualTo(429);
		assertThat(output).contains("Rate limit policy 'tunable' changed at run time from token-bucket(limit=2, "
				+ "period=PT1H, burst=2) to token-bucket(limit=4, period=PT1H, burst=4)");
		assertThat(this.http.get("/actuator/ratelimits").body()).contains("\"limit\":4").contains("\"overridden\":true");
		HttpResponse<String> one = this.http.get("/actuator/ratelimits/tunable");
		assertThat(one.statusCode()).as("GET of the path that was changed shows the policy in force").isEqualTo(200);
		assertThat(one.body()).isEqualTo(changed.body());
	}

	@Test
	void deleteRestoresTheConfiguredValuesAndWhatWasSpentStillCounts(CapturedOutput output) {
		post("tunable", "{\"limit\": 4}");
		for (int i = 0; i < 3; i++) {
			assertThat(get("restorer").statusCode()).isEqualTo(200);
		}
		HttpResponse<String> restored = this.http.delete("/actuator/ratelimits/tunable");
		assertThat(restored.statusCode()).isEqualTo(200);
		assertThat(restored.body()).contains("\"limit\":2").contains("\"overridden\":false");
		HttpResponse<String> rejected = get("restorer");
		assertThat(rejected.statusCode()).as("3 spent, the limit is 2 again").isEqualTo(429);
		assertThat(header(rejected, "RateLimit-Policy")).isEqualTo("\"tunable\";q=2;w=3600");
		assertThat(this.http.get("/actuator/ratelimits").body()).contains("\"overridden\":false");
		assertThat(output).contains("Rate limit policy 'tunable' restored from token-bucket(limit=4, period=PT1H, "
				+ "burst=4) to its configured token-bucket(limit=2, period=PT1H, burst=2)");
	}

	@Test
	void plansCanBeChangedAtRunTime() {
		HttpResponse<String> changed = post("tunable", plans("{\"gold\": {\"limit\": 10, \"period\": \"1m\"}}"));
		assertThat(changed.statusCode()).isEqualTo(200);
		HttpResponse<String> gold = this.http.get("/tunable", "X-Client", "golden", "X-Plan", "gold");
		assertThat(header(gold, "RateLimit-Policy")).isEqualTo("\"tunable\";q=10;w=60");
	}

	@Test
	void aBadValueIsAnswered400NamingTheFieldAndChangesNothing() {
		HttpResponse<String> zero = post("tunable", "{\"limit\": 0}");
		assertThat(zero.statusCode()).isEqualTo(400);
		assertThat(zero.body()).contains("\"field\":\"limit\"").contains("limit must be positive, was 0");
		HttpResponse<String> period = post("tunable", "{\"period\": \"soon\"}");
		assertThat(period.statusCode()).isEqualTo(400);
		assertThat(period.body()).contains("\"field\":\"period\"").contains("cannot read the duration 'soon'");
		for (String unitless : new String[] { "60", "\"60\"" }) {
			HttpResponse<String> milliseconds = post("tunable", "{\"period\": " + unitless + "}");
			assertThat(milliseconds.statusCode()).as(unitless).isEqualTo(400);
			assertThat(milliseconds.body()).contains("\"field\":\"period\"")
				.contains("the duration '60' has no unit, which would be read as milliseconds");
		}
		HttpResponse<String> huge = post("tunable", "{\"limit\": \"" + "9".repeat(100_000) + "x\"}");
		assertThat(huge.statusCode()).isEqualTo(400);
		assertThat(huge.body()).as("a bad value is not sent back whole").hasSizeLessThan(1_000)
			.contains("(100001 characters)");
		HttpResponse<String> plan = post("tunable", plans("{\"pro\": {\"limit\": -1}}"));
		assertThat(plan.statusCode()).isEqualTo(400);
		assertThat(plan.body()).contains("\"field\":\"plans.pro.limit\"");
		HttpResponse<String> algorithm = post("tunable", plans("{\"pro\": {\"algorithm\": \"fixed-window\"}}"));
		assertThat(algorithm.statusCode()).isEqualTo(400);
		assertThat(algorithm.body()).contains("\"field\":\"plans.pro.algorithm\"");
		HttpResponse<String> words = post("tunable", "{\"limit\": \"many\"}");
		assertThat(words.statusCode()).isEqualTo(400);
		assertThat(this.http.get("/actuator/ratelimits").body()).contains("\"overridden\":false");
		assertThat(get("unchanged").statusCode()).isEqualTo(200);
		assertThat(header(get("unchanged"), "RateLimit-Policy")).isEqualTo("\"tunable\";q=2;w=3600");
	}

	@Test
	void aChangeIsCheckedAgainstTheCostAndThePlanSourceAsStartUpChecksThem() {
		// costly: 4 an hour, 2 tokens a request, plans from X-Plan; unplanned: no plan source.
		HttpResponse<String> belowCost = post("costly", "{\"limit\": 1}");
		assertThat(belowCost.statusCode()).isEqualTo(400);
		assertThat(belowCost.body()).contains("\"field\":\"burst\"").contains("below the cost of a request (2)");
		HttpResponse<String> planBelowCost = post("costly", plans("{\"tiny\": {\"limit\": 1}}"));
		assertThat(planBelowCost.statusCode()).isEqualTo(400);
		assertThat(planBelowCost.body()).contains("\"field\":\"plans.tiny.burst\"")
			.contains("the burst of plan 'tiny' (1) is below the cost of a request (2)");
		// Plans for a policy without a plan source would be shown and never judge a request: refused, as at start-up.
		HttpResponse<String> unplanned = post("unplanned", plans("{\"pro\": {\"limit\": 100}}"));
		assertThat(unplanned.statusCode()).isEqualTo(400);
		assertThat(unplanned.body()).contains("\"field\":\"plans\"")
			.contains("plans are given but the policy has no plan source (rate-limit.policies.unplanned.plan)");
		String inForce = this.http.get("/actuator/ratelimits").body();
		assertThat(inForce).contains("\"costly\":{\"name\":\"costly\",\"algorithm\":\"token-bucket\",\"limit\":4,")
			.contains("\"unplanned\":{\"name\":\"unplanned\",\"algorithm\":\"token-bucket\",\"limit\":4,")
			.doesNotContain("\"overridden\":true");
	}

	@Test
	void aChangeThatSetsNothingIsRefusedNotAppliedAsAnOverride() {
		for (String body : new String[] { "{}", "{\"limit\": null}" }) {
			HttpResponse<String> nothing = post("tunable", body);
			assertThat(nothing.statusCode()).as(body).isEqualTo(400);
			assertThat(nothing.body()).as(body).contains("the change sets none of limit, period, burst and plans");
		}
		assertThat(this.http.get("/actuator/ratelimits").body()).contains("\"overridden\":false");
	}

	@Test
	void aMisspeltFieldIsAnswered400NamingItEvenNextToAValidOne() {
		for (String body : new String[] { "{\"limt\": 4}", "{\"limit\": 4, \"brust\": 8}" }) {
			HttpResponse<String> misspelt = post("tunable", body);
			assertThat(misspelt.statusCode()).as(body).isEqualTo(400);
			String field = body.contains("brust") ? "brust" : "limt";
			assertThat(misspelt.body()).as(body)
				.contains("\"policy\":\"tunable\"")
				.contains("\"field\":\"" + field + "\"")
				.contains("a change has no field '" + field + "'")
				.contains("limit, period, burst and plans");
		}
		// A query parameter is a field to actuator too.
		HttpResponse<String> query = this.http.postJson("/actuator/ratelimits/tunable?dryRun=true", "{\"limit\": 4}");
		assertThat(query.statusCode()).isEqualTo(400);
		assertThat(query.body()).contains("\"field\":\"dryRun\"");
		// Nothing was changed, not even by the valid field beside the misspelt one.
		assertThat(this.http.get("/actuator/ratelimits").body()).contains("\"overridden\":false");
		assertThat(header(get("unchanged"), "RateLimit-Policy")).isEqualTo("\"tunable\";q=2;w=3600");
	}

	@Test
	void anUnknownPolicyIs404ForEveryOperation() {
		HttpResponse<String> change = post("nope", "{\"limit\": 4}");
		assertThat(change.statusCode()).isEqualTo(404);
		assertThat(change.body()).contains("no policy named 'nope' (runtime changes apply to the policies named");
		assertThat(this.http.delete("/actuator/ratelimits/nope").statusCode()).isEqualTo(404);
		HttpResponse<String> read = this.http.get("/actuator/ratelimits/nope");
		assertThat(read.statusCode()).isEqualTo(404);
		assertThat(read.body()).contains("no policy named 'nope' (GET /actuator/ratelimits lists the policies");
		assertThat(this.http.get("/actuator/ratelimits/nope/header:spender").statusCode()).isEqualTo(404);
		HttpResponse<String> reset = this.http.delete("/actuator/ratelimits/nope/header:spender");
		assertThat(reset.statusCode()).as("the key reset too").isEqualTo(404);
		assertThat(reset.body()).as("naming it, as a read does").contains("no policy named 'nope'");
	}

	/** Actuator reads a body of scalars: the plans are a JSON document in a string. */
	private static String plans(String json) {
		return "{\"plans\": \"" + json.replace("\"", "\\\"") + "\"}";
	}

	private HttpResponse<String> get(String client) {
		return this.http.get("/tunable", "X-Client", client);
	}

	private HttpResponse<String> post(String policy, String json) {
		HttpRequest request = HttpRequest
			.newBuilder(URI.create("http://localhost:" + this.port + "/actuator/ratelimits/" + policy))
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(json))
			.build();
		try {
			return CLIENT.send(request, HttpResponse.BodyHandlers.ofString());
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}
}
