package io.github.ratelimit.it;

import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.servlet.http.HttpServletRequest;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.ratelimit.testsupport.Http;
import io.github.ratelimit.unreadable.UnreadableKeysController;
import io.github.ratelimit.web.KeyResolver;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A client cannot choose its rate limit key: a key, plan or exemption that cannot be told from a request
 * (parameters that cannot be decoded, a key header sent twice, a parameter sent as a file part, an
 * expression, a bean or a plan that throws) refuses it with a 400, before any budget is spent, instead
 * of keying it by its client IP. A locked-out account stays locked out from every client IP: its attacker
 * never gets another 401.
 */
@ExtendWith(OutputCaptureExtension.class)
@SpringBootTest(classes = { TestApplication.class, UnreadableKeysController.class, UnreadableKeysTests.Beans.class },
		webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "rate-limit.client-ip.trusted-proxies=127.0.0.1",
				"rate-limit.policies.uk-shadowed.limit=1", "rate-limit.policies.uk-shadowed.period=1m",
				"rate-limit.policies.uk-shadowed.key=param:username", "rate-limit.policies.uk-shadowed.shadow=true",
				"rate-limit.policies.uk-ip.limit=100", "rate-limit.policies.uk-ip.period=1m",
				"rate-limit.rules[0].path=/uk/mixed", "rate-limit.rules[0].policies=uk-shadowed,uk-ip",
				"rate-limit.policies.uk-plan.limit=1", "rate-limit.policies.uk-plan.period=1m",
				"rate-limit.policies.uk-plan.key=header:X-Api-Key", "rate-limit.policies.uk-plan.plan=@ukPlan",
				"rate-limit.policies.uk-plan.plans.pro.limit=5",
				"rate-limit.rules[1].path=/uk/plan", "rate-limit.rules[1].policies=uk-plan",
				"rate-limit.policies.uk-exempt.limit=1", "rate-limit.policies.uk-exempt.period=1m",
				"rate-limit.policies.uk-exempt.exempt-when=header('X-Probe').length() > 3",
				"rate-limit.rules[2].path=/uk/exempt", "rate-limit.rules[2].policies=uk-exempt" })
class UnreadableKeysTests {

	/** Parameters Tomcat cannot decode (UTF-8): a bad byte, bad hex, a lone %, a bad name, overlong UTF-8. */
	private static final String[] UNDECODABLE = { "x=%FF", "x=%ZZ", "x=%", "%FF=1", "x=%C0%AF", "x=%E2%82" };

	/** Clients behind the trusted proxy 127.0.0.1. */
	private static final String[] ATTACKERS = { "198.51.100.1", "198.51.100.2", "198.51.100.3" };

	@LocalServerPort
	int port;

	@Autowired
	MeterRegistry meters;

	Http http;

	RawHttp raw;

	@BeforeEach
	void clients() {
		this.http = new Http(this.port);
		this.raw = new RawHttp(this.port);
	}

	@Test
	void undecodableParametersNeverGiveALockedAccountAnotherGuess() {
		lockOut("victim2");
		for (String attacker : ATTACKERS) {
			for (String junk : UNDECODABLE) {
				for (String body : new String[] { "username=victim2&password=guess&" + junk,
						junk + "&username=victim2&password=guess" }) {
					HttpResponse<String> response = login(body, attacker);
					assertThat(response.statusCode()).as(body + " from " + attacker).isIn(400, 429);
				}
				RawHttp.Response inQuery = this.raw.send("POST /uk/login?" + junk + " HTTP/1.1\r\nX-Forwarded-For: "
						+ attacker + "\r\nContent-Type: application/x-www-form-urlencoded",
						"username=victim2&password=guess".getBytes(StandardCharsets.ISO_8859_1));
				assertThat(inQuery.status()).as(junk + " in the query from " + attacker).isIn(400, 429);
			}
		}
		assertThat(login("username=victim2&password=right", "198.51.100.9").statusCode()).as("still locked out")
			.isEqualTo(429);
	}

	@Test
	void tooManyParametersNeverGiveALockedAccountAnotherGuess() {
		lockOut("victim3");
		StringBuilder many = new StringBuilder("username=victim3&password=guess");
		for (int i = 0; i < 1100; i++) {
			many.append("&p").append(i).append("=1");
		}
		for (String attacker : ATTACKERS) {
			assertThat(login(many.toString(), attacker).statusCode()).as(attacker).isIn(400, 429);
		}
	}

	@Test
	void theRefusalIsAProblemAndSpendsNothing() {
		HttpResponse<String> refused = login("username=fresh&password=guess&x=%FF", "198.51.100.20");
		assertThat(refused.statusCode()).isEqualTo(400);
		assertThat(refused.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(refused.headers().firstValue("Cache-Control")).hasValue("no-store");
		assertThat(refused.body()).contains("\"status\":400").contains("'uk-login'")
			.contains("its parameters cannot be decoded").contains("\"instance\":\"/uk/login\"");
		assertThat(refused.headers().map().keySet()).noneMatch((name) -> name.toLowerCase().contains("ratelimit"));
		for (int i = 0; i < 3; i++) {
			assertThat(login("username=fresh&password=guess", "198.51.100.20").statusCode()).as("nothing spent")
				.isEqualTo(401);
		}
		assertThat(this.meters.get("ratelimit.decisions").tag("policy", "uk-login").tag("outcome", "unreadable")
			.counter()
			.count()).isGreaterThanOrEqualTo(1);
	}

	@Test
	void aHeaderKeyTakesEveryWayOfWritingTheNameAsOneAndRefusesARepeatedHeader() {
		for (int i = 0; i < 3; i++) {
			assertThat(headerLogin("198.51.100.30", "X-User: hvictim").status()).isEqualTo(401);
		}
		assertThat(headerLogin("198.51.100.30", "X-User: hvictim").status()).isEqualTo(429);
		for (String attacker : ATTACKERS) {
			assertThat(headerLogin(attacker, "X-User: hvictim\u00a0").status()).as("no-break space").isEqualTo(429);
			assertThat(headerLogin(attacker, "X-User: HVictim").status()).as("case").isEqualTo(429);
			assertThat(headerLogin(attacker, "X-User: hvictim,other").status()).as("comma").isEqualTo(429);
			assertThat(headerLogin(attacker, "X-User: hvictim\r\nX-User: other").status()).as("twice").isEqualTo(400);
			assertThat(headerLogin(attacker, "X-User: other\r\nX-User: hvictim").status()).as("twice").isEqualTo(400);
			assertThat(headerLogin(attacker, "x-user: hvictim\r\nX-USER: hvictim").status()).as("twice")
				.isEqualTo(400);
		}
		// A blank header is absent: the client IP's budget, and the handler's answer.
		assertThat(headerLogin("198.51.100.31", "X-User: \u00a0").status()).isEqualTo(401);
	}

	@Test
	void anExpressionOrABeanThatThrowsOnAValueThatIsPresentRefusesTheRequest() {
		for (String attacker : ATTACKERS) {
			// substring(0, 8) of a shorter token; a token that is no Base64.
			assertThat(this.http.post("/uk/token-login", "password=guess", "X-Token", "short", "X-Forwarded-For", attacker)
				.statusCode()).isEqualTo(400);
			assertThat(this.http.post("/uk/bean-login", "password=guess", "X-Token", "not base64!", "X-Forwarded-For",
					attacker)
				.statusCode()).isEqualTo(400);
		}
		String token = Base64.getEncoder().encodeToString("bvictim".getBytes(StandardCharsets.UTF_8));
		for (int i = 0; i < 3; i++) {
			assertThat(this.http.post("/uk/bean-login", "password=guess", "X-Token", token, "X-Forwarded-For", ATTACKERS[i])
				.statusCode()).isEqualTo(401);
		}
		assertThat(this.http.post("/uk/bean-login", "password=guess", "X-Token", token).statusCode()).isEqualTo(429);
	}

	@Test
	void aPlanThatCannotBeToldRefusesTheRequest() {
		for (String attacker : ATTACKERS) {
			HttpResponse<String> response = this.http.get("/uk/plan", "X-Api-Key", "key-the-lookup-fails-on",
					"X-Forwarded-For", attacker);
			assertThat(response.statusCode()).isEqualTo(400);
			assertThat(response.body()).contains("'uk-plan'").contains("its plan cannot be told");
		}
		assertThat(this.http.get("/uk/plan", "X-Api-Key", "pro-key").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/uk/plan", "X-Api-Key", "pro-key").statusCode()).as("pro: 5").isEqualTo(200);
	}

	@Test
	void anExemptionThatThrowsRefusesTheRequest() {
		// No X-Probe header: header('X-Probe').length() fails on null (write header('X-Probe')?.length()).
		assertThat(this.http.get("/uk/exempt", "X-Forwarded-For", ATTACKERS[0]).statusCode()).isEqualTo(400);
		assertThat(this.http.get("/uk/exempt", "X-Probe", "monitor").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/uk/exempt", "X-Probe", "monitor").statusCode()).as("exempt").isEqualTo(200);
		assertThat(this.http.get("/uk/exempt", "X-Probe", "no").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/uk/exempt", "X-Probe", "no").statusCode()).isEqualTo(429);
	}

	@Test
	void aParameterSentAsAFilePartRefusesTheRequest() {
		for (int i = 0; i < 3; i++) {
			assertThat(multipartLogin("198.51.100.40", false).status()).isEqualTo(401);
		}
		assertThat(multipartLogin("198.51.100.40", false).status()).isEqualTo(429);
		for (String attacker : ATTACKERS) {
			assertThat(multipartLogin(attacker, false).status()).as("a field").isEqualTo(429);
			RawHttp.Response asFile = multipartLogin(attacker, true);
			assertThat(asFile.status()).as("a file part").isEqualTo(400);
			assertThat(asFile.body()).contains("parameter 'username' is sent as a file part");
		}
	}

	@Test
	void aParameterKeyOnAJsonBodyIsTheClientIpAndSaidAtWarn(CapturedOutput output) {
		String json = "{\"username\":\"jvictim\",\"password\":\"guess\"}";
		for (int i = 0; i < 3; i++) {
			assertThat(this.http.postJson("/uk/json-login", json, "X-Forwarded-For", "198.51.100.50").statusCode())
				.isEqualTo(401);
		}
		assertThat(this.http.postJson("/uk/json-login", json, "X-Forwarded-For", "198.51.100.50").statusCode())
			.isEqualTo(429);
		assertThat(this.http.postJson("/uk/json-login", json, "X-Forwarded-For", "198.51.100.51").statusCode())
			.as("keyed by IP: documented, and said").isEqualTo(401);
		assertThat(output).contains("reads parameter 'username', which a request with a body of type application/json");
	}

	@Test
	void aShadowPolicyThatCannotTellTheKeyNeverRefusesTheRequest() {
		for (String attacker : ATTACKERS) {
			HttpResponse<String> response = this.http.post("/uk/mixed", "username=someone&x=%FF", "X-Forwarded-For",
					attacker);
			assertThat(response.statusCode()).isEqualTo(200);
			assertThat(response.headers().firstValue("RateLimit-Policy")).hasValue("\"uk-ip\";q=100;w=60");
		}
		Counter counted = this.meters.find("ratelimit.decisions")
			.tags("policy", "uk-shadowed", "outcome", "shadow-unreadable")
			.counter();
		assertThat(counted).isNotNull();
		assertThat(counted.count()).isGreaterThanOrEqualTo(3);
	}

	private void lockOut(String user) {
		for (int i = 0; i < 3; i++) {
			assertThat(login("username=" + user + "&password=wrong", "198.51.100.10").statusCode()).isEqualTo(401);
		}
		assertThat(login("username=" + user + "&password=wrong", "198.51.100.10").statusCode()).isEqualTo(429);
	}

	private HttpResponse<String> login(String body, String client) {
		return this.http.post("/uk/login", body, "X-Forwarded-For", client);
	}

	private RawHttp.Response headerLogin(String client, String userLines) {
		byte[] body = "password=guess".getBytes(StandardCharsets.ISO_8859_1);
		return this.raw.send("POST /uk/header-login HTTP/1.1\r\n" + userLines + "\r\nX-Forwarded-For: " + client
				+ "\r\nContent-Type: application/x-www-form-urlencoded", body);
	}

	private RawHttp.Response multipartLogin(String client, boolean usernameAsFile) {
		String boundary = "b0undary";
		String body = "--" + boundary + "\r\nContent-Disposition: form-data; name=\"username\""
				+ (usernameAsFile ? "; filename=\"u.txt\"\r\nContent-Type: text/plain" : "") + "\r\n\r\nmvictim\r\n"
				+ "--" + boundary + "\r\nContent-Disposition: form-data; name=\"password\"\r\n\r\nguess\r\n--" + boundary
				+ "--\r\n";
		return this.raw.send("POST /uk/multipart-login HTTP/1.1\r\nX-Forwarded-For: " + client
				+ "\r\nContent-Type: multipart/form-data; boundary=" + boundary, body.getBytes(StandardCharsets.UTF_8));
	}

	@Configuration(proxyBeanMethods = false)
	static class Beans {

		/** The subject of a token: here its Base64 decoded (a JWT decoder would throw alike on junk). */
		@Bean
		KeyResolver ukTokenSubject() {
			return (HttpServletRequest request) -> {
				String token = request.getHeader("X-Token");
				return (token != null) ? new String(Base64.getDecoder().decode(token), StandardCharsets.UTF_8) : null;
			};
		}

		@Bean
		KeyResolver ukPlan() {
			Map<String, String> plans = Map.of("pro-key", "pro");
			return (HttpServletRequest request) -> {
				String apiKey = request.getHeader("X-Api-Key");
				if ("key-the-lookup-fails-on".equals(apiKey)) {
					throw new IllegalStateException("the customer database is away");
				}
				return (apiKey != null) ? plans.get(apiKey) : null;
			};
		}

	}
}
