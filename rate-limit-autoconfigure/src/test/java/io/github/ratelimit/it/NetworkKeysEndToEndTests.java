package io.github.ratelimit.it;

import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import io.github.ratelimit.testsupport.Http;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * IPv6 clients keyed by their /64, the actuator's key paths for such keys, and keys a client cannot
 * bend: the hashed form of a long value, repeated parameters. Behind a trusted proxy (127.0.0.1).
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "rate-limit.client-ip.trusted-proxies=127.0.0.1",
				"management.endpoints.web.exposure.include=ratelimits" })
class NetworkKeysEndToEndTests {

	@LocalServerPort
	int port;

	Http http;

	@BeforeEach
	void client() {
		this.http = new Http(this.port);
	}

	@Test
	void fiftyAddressesOfOneSlash64ShareOneBudget() {
		List<Integer> statuses = new ArrayList<>();
		for (int i = 0; i < 50; i++) {
			String address = "2001:db8:7:8:" + Integer.toHexString(i * 1301) + ":" + Integer.toHexString(i) + ":1:" + i;
			statuses.add(this.http.get("/ip/v6", "X-Forwarded-For", address).statusCode());
		}
		assertThat(statuses.subList(0, 3)).containsOnly(200);
		assertThat(statuses.subList(3, 50)).containsOnly(429);
		assertThat(this.http.get("/ip/v6", "X-Forwarded-For", "[2001:db8:7:9::1]:443").statusCode())
			.as("the next /64 is another subscriber").isEqualTo(200);
		assertThat(this.http.get("/ip/v6", "X-Forwarded-For", "198.51.100.20:1234").statusCode())
			.as("IPv4 with a port is that address, not the proxy").isEqualTo(200);
	}

	@Test
	void theActuatorTakesNetworkKeysAsShown() {
		for (int i = 0; i < 3; i++) {
			this.http.get("/ip/other/v6", "X-Forwarded-For", "2001:db8:aa:bb::" + i);
		}
		assertThat(this.http.get("/ip/other/v6", "X-Forwarded-For", "2001:db8:aa:bb::99").statusCode()).isEqualTo(429);
		HttpResponse<String> state = this.http.get("/actuator/ratelimits/by-ip-other/ip:2001:db8:aa:bb::/64");
		assertThat(state.statusCode()).isEqualTo(200);
		assertThat(state.body()).contains("\"key\":\"ip:2001:db8:aa:bb::/64\"").contains("\"remaining\":0");
		HttpResponse<String> reset = this.http.delete("/actuator/ratelimits/by-ip-other/ip:2001:db8:aa:bb::/64");
		assertThat(reset.statusCode()).isEqualTo(200);
		assertThat(reset.body()).contains("\"remaining\":3");
		assertThat(this.http.get("/ip/other/v6", "X-Forwarded-For", "2001:db8:aa:bb::99").statusCode()).isEqualTo(200);
	}

	@Test
	void theActuatorFindsAKeyByTheClientsAddressInAnyFormAndByALongValue() {
		for (int i = 0; i < 3; i++) {
			this.http.get("/ip/third/v6", "X-Forwarded-For", "2001:db8:cc:dd::" + i);
			this.http.get("/ip/third/v4", "X-Forwarded-For", "198.51.100.77");
		}
		HttpResponse<String> network = this.http.get("/actuator/ratelimits/by-ip-third/ip:2001:0db8:cc:dd:0:0:0:5");
		assertThat(network.body()).contains("\"key\":\"ip:2001:db8:cc:dd::/64\"").contains("\"remaining\":0");
		HttpResponse<String> mapped = this.http.delete("/actuator/ratelimits/by-ip-third/ip:::ffff:198.51.100.77");
		assertThat(mapped.body()).contains("\"key\":\"ip:198.51.100.77\"").contains("\"remaining\":3");
		assertThat(this.http.get("/ip/third/v4", "X-Forwarded-For", "198.51.100.77").statusCode()).isEqualTo(200);

		String longKey = "m".repeat(100);
		for (int i = 0; i < 2; i++) {
			this.http.get("/t/header", "X-Api-Key", longKey);
		}
		assertThat(this.http.get("/t/header", "X-Api-Key", longKey).statusCode()).isEqualTo(429);
		HttpResponse<String> reset = this.http.delete("/actuator/ratelimits/LimitedController.header/header:" + longKey);
		assertThat(reset.body()).contains("\"key\":\"header:sha256:").contains("\"remaining\":2");
		assertThat(this.http.get("/t/header", "X-Api-Key", longKey).statusCode()).isEqualTo(200);
	}

	@Test
	void unknownPoliciesAnswer404() {
		assertThat(this.http.delete("/actuator/ratelimits/nope/ip:1.2.3.4").statusCode()).isEqualTo(404);
		assertThat(this.http.get("/actuator/ratelimits/nope/ip:1.2.3.4").statusCode()).isEqualTo(404);
		assertThat(this.http.delete("/actuator/ratelimits/nope/ip:2001:db8::/64").statusCode()).isEqualTo(404);
		assertThat(this.http.get("/actuator/ratelimits/by-ip/ip:1.2.3.4").statusCode()).isEqualTo(200);
	}

	@Test
	void aValueEqualToTheHashOfALongOneGetsItsOwnBudget() throws Exception {
		String longKey = "k".repeat(100);
		for (int i = 0; i < 2; i++) {
			assertThat(this.http.get("/t/header", "X-Api-Key", longKey).statusCode()).isEqualTo(200);
		}
		assertThat(this.http.get("/t/header", "X-Api-Key", longKey).statusCode()).isEqualTo(429);
		byte[] digest = MessageDigest.getInstance("SHA-256").digest(longKey.getBytes(StandardCharsets.UTF_8));
		String hashedForm = "sha256:" + Base64.getUrlEncoder().withoutPadding().encodeToString(digest);
		assertThat(this.http.get("/t/header", "X-Api-Key", hashedForm).statusCode())
			.as("not the long value's budget").isEqualTo(200);
	}

	@Test
	void repeatingTheParameterGivesNoSecondBudget() {
		for (int i = 0; i < 3; i++) {
			assertThat(this.http.post("/ops/login", "user=mallory&password=guess").statusCode()).isEqualTo(401);
		}
		assertThat(this.http.post("/ops/login", "user=&user=mallory&password=guess").statusCode())
			.as("a blank value aside: mallory's, not the client IP's").isEqualTo(429);
		assertThat(this.http.post("/ops/login", "user=mallory&user=MALLORY&password=guess").statusCode()).isEqualTo(429);
		// Two accounts in one request: whichever the handler reads, it is no one's budget: refused.
		for (String twoAccounts : List.of("user=x&user=mallory", "user=mallory,x", "user=,x&user=mallory")) {
			HttpResponse<String> refused = this.http.post("/ops/login", twoAccounts + "&password=guess");
			assertThat(refused.statusCode()).as(twoAccounts).isEqualTo(400);
			assertThat(refused.body()).contains("names more than one account");
		}
	}

}
