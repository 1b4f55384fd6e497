package io.github.ratelimit.web.key;

import java.security.Principal;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import jakarta.servlet.http.HttpServletRequest;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockMultipartHttpServletRequest;
import org.springframework.mock.web.MockPart;
import org.springframework.web.servlet.HandlerMapping;

import io.github.ratelimit.core.RateLimitConfigurationException;
import io.github.ratelimit.web.AsyncRequestKeyResolver;
import io.github.ratelimit.web.KeyResolver;
import io.github.ratelimit.web.RateLimitRequest;
import io.github.ratelimit.web.RequestKeyResolver;
import io.github.ratelimit.web.clientip.ClientIpResolver;
import io.github.ratelimit.web.servlet.ServletRequestView;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.mockito.Mockito.mock;

@ExtendWith(OutputCaptureExtension.class)
public class KeyResolversTests {

	private final DefaultListableBeanFactory beans = new DefaultListableBeanFactory();

	private final KeyResolvers keyResolvers = new KeyResolvers(ClientIpResolver.builder().build(), this.beans);

	private final MockHttpServletRequest request = new MockHttpServletRequest("GET", "/x");

	KeyResolversTests() {
		this.request.setRemoteAddr("203.0.113.7");
	}

	@Test
	void builtInKeysAreTypedSoSourcesNeverCollide() {
		this.request.addHeader("X-Api-Key", "203.0.113.7");
		this.request.setParameter("name", "alice");
		this.request.setUserPrincipal(() -> "alice");
		assertThat(resolve("ip")).isEqualTo("ip:203.0.113.7");
		assertThat(resolve("header:X-Api-Key")).isEqualTo("header:203.0.113.7");
		assertThat(resolve("param:name")).isEqualTo("param:alice");
		assertThat(resolve("user")).isEqualTo("user:alice");
		assertThat(resolve("global")).isEqualTo("global");
	}

	@Test
	void missingSourcesFallBackToTheClientIp() {
		assertThat(resolve("header:X-Api-Key")).isEqualTo("ip:203.0.113.7");
		assertThat(resolve("param:name")).isEqualTo("ip:203.0.113.7");
		assertThat(resolve("user")).isEqualTo("ip:203.0.113.7");
		this.request.addHeader("X-Blank", "  ");
		assertThat(resolve("header:X-Blank")).isEqualTo("ip:203.0.113.7");
	}

	@Test
	void longValuesAreHashed() {
		String atLimit = "a".repeat(KeyValues.MAX_RAW_LENGTH);
		this.request.addHeader("A", atLimit);
		this.request.addHeader("B", atLimit + "b");
		assertThat(resolve("header:A")).isEqualTo("header:" + atLimit);
		String hashed = resolve("header:B");
		assertThat(hashed).startsWith("header:sha256:").hasSize("header:sha256:".length() + 43);
		this.request.addHeader("C", atLimit + "c");
		assertThat(resolve("header:C")).isNotEqualTo(hashed);
	}

	@Test
	void aValueLookingLikeAHashNeverSharesTheHashedValuesBudget() {
		String longValue = "v".repeat(KeyValues.MAX_RAW_LENGTH + 1);
		this.request.addHeader("A", longValue);
		String hashed = resolve("header:A");
		MockHttpServletRequest forged = new MockHttpServletRequest("GET", "/x");
		forged.addHeader("A", hashed.substring("header:".length()));
		String forgedKey = this.keyResolvers.forSpec("header:A", "test").read(view(forged));
		assertThat(forgedKey).startsWith("header:sha256:").isNotEqualTo(hashed);
		// Values that merely start alike are not hashed.
		this.request.addHeader("B", "sha256");
		this.request.addHeader("C", "SHA256:x");
		assertThat(resolve("header:B")).isEqualTo("header:sha256");
		// Case folded as for param: keys, then in the hashed namespace: never a hashed value's budget.
		assertThat(resolve("header:C")).startsWith("header:sha256:").isNotEqualTo(hashed)
			.isEqualTo(this.keyResolvers.canonical("header:SHA256:x"));
	}

	@Test
	void aParameterWhoseValuesNameTwoAccountsIsRefusedAndOneNamedTwiceIsThatAccount() {
		// getParameter reads the first value, Spring MVC binds u=a&u=b to "a,b" or a list, an application may
		// take the last: a request whose values name two accounts is no one's, whichever way it is read.
		for (String[] values : List.of(new String[] { "alice", "x" }, new String[] { "alice,x" },
				new String[] { "mallory", "alice" }, new String[] { "alice,x", "alice" }, new String[] { ",alice", "bob" })) {
			assertThatExceptionOfType(UnreadableRequestException.class).as(String.join("&", values))
				.isThrownBy(() -> key(Map.of("u", values)))
				.withMessageContaining("parameter 'u' names more than one account");
		}
		assertThat(key(Map.of("u", new String[] { "alice" }))).isEqualTo("param:alice");
		assertThat(key(Map.of("u", new String[] { "alice", "Alice", " alice" }))).as("one account").isEqualTo("param:alice");
		assertThat(key(Map.of("u", new String[] { "", "alice" }))).as("a blank value aside").isEqualTo("param:alice");
		assertThat(key(Map.of("u", new String[] { ",alice" }))).as("a blank part aside").isEqualTo("param:alice");
		assertThat(key(Map.of("u", new String[] { "alice," }))).isEqualTo("param:alice");
		assertThat(key(Map.of("u", new String[] { "", " , " }))).as("blank: the client IP's").isEqualTo("ip:203.0.113.7");
	}

	@Test
	void theArrayFormOfAParameterIsThatParameterWhenItIsAbsent() {
		// Spring MVC's @RequestParam("u") reads u[] when there is no u.
		assertThat(key(Map.of("u[]", new String[] { "alice" }))).isEqualTo("param:alice");
		assertThatExceptionOfType(UnreadableRequestException.class).as("two accounts")
			.isThrownBy(() -> key(Map.of("u[]", new String[] { "alice", "x" })));
		assertThat(key(Map.of("u", new String[] { "bob" }, "u[]", new String[] { "alice" })))
			.as("u first, as the handler reads it").isEqualTo("param:bob");
		assertThat(key(Map.of("u[]", new String[] { "" }))).as("empty: the client IP").isEqualTo("ip:203.0.113.7");
		MockHttpServletRequest request = new MockHttpServletRequest("POST", "/login");
		request.setParameter("u[]", "alice");
		assertThat(this.keyResolvers.forSpec("#{param('u')}", "test").read(view(request))).endsWith(":alice");
		assertThat(this.keyResolvers.forPlanSpec("param:u", "test").read(view(request))).isEqualTo("alice");
	}

	@Test
	void aTemplateNormalisesAParameterAsTheApplicationDoes() {
		// The template docs/keys-and-client-ip.md gives for an application that trims and folds usernames.
		RequestValue normalised = this.keyResolvers.forSpec("#{param('username')?.trim()?.toLowerCase()}", "test");
		MockHttpServletRequest plain = new MockHttpServletRequest("POST", "/login");
		plain.setParameter("username", "alice");
		MockHttpServletRequest variant = new MockHttpServletRequest("POST", "/login");
		variant.setParameter("username", " ALICE\t");
		assertThat(normalised.read(view(variant))).isEqualTo(normalised.read(view(plain))).endsWith(":alice");
		MockHttpServletRequest none = new MockHttpServletRequest("POST", "/login");
		none.setRemoteAddr("203.0.113.9");
		assertThat(normalised.read(view(none))).isEqualTo("ip:203.0.113.9");
	}

	private String key(Map<String, String[]> parameters) {
		MockHttpServletRequest request = new MockHttpServletRequest("POST", "/login");
		request.setRemoteAddr("203.0.113.7");
		request.setParameters(parameters);
		return this.keyResolvers.forSpec("param:u", "test").read(view(request));
	}

	@Test
	void spelTemplatesReadTheRequest() {
		this.request.addHeader("X-Tenant", "acme");
		this.request.setParameter("q", "v");
		this.request.setUserPrincipal(() -> "bob");
		this.request.setAttribute(HandlerMapping.URI_TEMPLATE_VARIABLES_ATTRIBUTE, Map.of("id", "42"));
		assertThat(resolve("#{ip}")).isEqualTo("expr:203.0.113.7");
		assertThat(resolve("#{header('X-Tenant')}-#{pathVariables['id']}")).isEqualTo("expr:acme-42");
		assertThat(resolve("#{user}:#{param('q')}:#{request.method}")).isEqualTo("expr:bob:v:GET");
	}

	@Test
	void spelNullsAtRuntimeFallBackToTheClientIpAndErrorsRefuseTheRequest() {
		assertThat(resolve("#{header('Missing')}")).isEqualTo("ip:203.0.113.7");
		assertThat(resolve("#{header('Missing')?.length()}")).isEqualTo("ip:203.0.113.7");
		assertThatExceptionOfType(UnreadableRequestException.class).isThrownBy(() -> resolve("#{header('Missing').length()}"))
			.satisfies((ex) -> assertThat(ex.fallbackKey()).isEqualTo("ip:203.0.113.7"));
		assertThatExceptionOfType(UnreadableRequestException.class)
			.isThrownBy(() -> resolve("#{T(java.lang.Runtime).getRuntime()}"));
		// A value that is present and that the expression throws on: never the client IP's budget.
		this.request.addHeader("X-Token", "abc");
		assertThatExceptionOfType(UnreadableRequestException.class)
			.isThrownBy(() -> resolve("#{header('X-Token').substring(0, 8)}"))
			.satisfies((ex) -> assertThat(ex.origin()).isEqualTo("test"));
	}

	@Test
	void beanResolversAreLookedUpByName() {
		this.beans.registerSingleton("tenant", (KeyResolver) (request) -> request.getHeader("X-Tenant"));
		this.beans.registerSingleton("broken", (KeyResolver) (request) -> {
			throw new IllegalStateException("bug in user code");
		});
		this.beans.registerSingleton("notAResolver", "hello");
		this.request.addHeader("X-Tenant", "acme");
		assertThat(resolve("@tenant")).isEqualTo("bean:acme");
		assertThatExceptionOfType(UnreadableRequestException.class).isThrownBy(() -> resolve("@broken"))
			.satisfies((ex) -> assertThat(ex.reason()).isEqualTo("its key cannot be read"));
		assertThatExceptionOfType(RateLimitConfigurationException.class).isThrownBy(() -> resolve("@notAResolver"))
			.withMessageContaining("bean 'notAResolver' is not a io.github.ratelimit.web.RequestKeyResolver nor an "
					+ "io.github.ratelimit.web.AsyncRequestKeyResolver");
	}

	@Test
	void anAsynchronousResolverIsAskedOncePerRequestAndItsFailureRefusesIt() {
		AtomicInteger asked = new AtomicInteger();
		CompletableFuture<@Nullable String> answer = new CompletableFuture<>();
		this.beans.registerSingleton("account", (AsyncRequestKeyResolver) (request) -> {
			asked.incrementAndGet();
			return answer;
		});
		this.beans.registerSingleton("failing", (AsyncRequestKeyResolver) (request) -> CompletableFuture
			.failedFuture(new IllegalStateException("the account service is away")));
		this.beans.registerSingleton("throwing", (AsyncRequestKeyResolver) (request) -> {
			throw new IllegalStateException("bug in user code");
		});
		RequestValue key = this.keyResolvers.forSpec("@account", "test");
		RequestValue plan = this.keyResolvers.forPlanSpec("@account", "test");
		ServletRequestView view = view(this.request);
		CompletableFuture<?> fetched = key.fetch(view);
		assertThat(fetched).as("the answer has not come").isNotDone();
		assertThat(plan.fetch(view)).as("one question per request").isSameAs(fetched);
		answer.complete("acme");
		assertThat(key.read(view)).isEqualTo("bean:acme");
		assertThat(plan.read(view)).isEqualTo("acme");
		assertThat(asked).hasValue(1);
		assertThat(this.keyResolvers.forSpec("@account", "test").read(view(this.request))).as("another request asks again")
			.isEqualTo("bean:acme");
		assertThat(asked).hasValue(2);
		for (String failing : List.of("@failing", "@throwing")) {
			assertThatExceptionOfType(UnreadableRequestException.class)
				.isThrownBy(() -> this.keyResolvers.forSpec(failing, "test").read(view(this.request)))
				.satisfies((ex) -> assertThat(ex.reason()).isEqualTo("its key cannot be read"));
			assertThatExceptionOfType(UnreadableRequestException.class)
				.isThrownBy(() -> this.keyResolvers.forPlanSpec(failing, "test").read(view(this.request)))
				.satisfies((ex) -> assertThat(ex.reason()).isEqualTo("its plan cannot be told"));
		}
		this.beans.registerSingleton("nobody", (AsyncRequestKeyResolver) (request) -> CompletableFuture.completedFuture(null));
		assertThat(this.keyResolvers.forSpec("@nobody", "test").read(view(this.request))).as("falls back to the client IP")
			.isEqualTo("ip:203.0.113.7");
	}

	@Test
	void aRequestKeyResolverReadsTheRequestAsTheLimiterSeesIt() {
		AtomicReference<String> seen = new AtomicReference<>();
		this.beans.registerSingleton("view", (RequestKeyResolver) (request) -> {
			seen.set(String.join("|", request.method(), request.path(), request.header("x-tenant"),
					String.join("+", request.headers("X-Tenant")), request.parameter("u"), request.principal().getName(),
					request.clientIp(), String.valueOf(request.unwrap(HttpServletRequest.class) != null),
					String.valueOf(request.unwrap(String.class))));
			return "k";
		});
		MockHttpServletRequest request = new MockHttpServletRequest("POST", "/app/orders/7");
		request.setContextPath("/app");
		request.setRemoteAddr("2001:db8:7:8::1");
		request.addHeader("X-Tenant", "acme");
		request.addHeader("X-Tenant", "other");
		request.setParameter("u", "alice");
		request.setUserPrincipal(() -> "bob");
		assertThat(this.keyResolvers.forSpec("@view", "test").read(view(request))).isEqualTo("bean:k");
		assertThat(seen).hasValue("POST|/orders/7|acme|acme+other|alice|bob|2001:db8:7:8::/64|true|null");
	}

	@Test
	@SuppressWarnings("deprecation")
	void aServletKeyResolverOfTheFirstReleaseStillGetsItsServletRequest() {
		this.beans.registerSingleton("servlet", (KeyResolver) (request) -> request.getRequestURI());
		this.request.setRequestURI("/api/x");
		assertThat(resolve("@servlet")).isEqualTo("bean:/api/x");
		RateLimitRequest reactive = mock(RateLimitRequest.class);
		assertThatIllegalStateException()
			.isThrownBy(() -> ((KeyResolver) (request) -> "never").resolve(reactive))
			.withMessageContaining("implement RequestKeyResolver");
	}

	@Test
	void principalWithoutNameFallsBack() {
		Principal nameless = () -> null;
		this.request.setUserPrincipal(nameless);
		assertThat(resolve("user")).isEqualTo("ip:203.0.113.7");
	}

	@Test
	void aParameterIsKeyedByTheAccountItNamesHoweverItIsWritten() {
		String[] variants = { "alice", "Alice", " alice ", "ALICE\t", "alice\u00a0", "\u3000alice",
				"\uff41\uff4c\uff49\uff43\uff45", "alice,Alice",
				// Characters that do not show: a soft hyphen, zero-width space, joiner, word joiner, byte order
				// mark, a variation selector, anywhere and as many as you like.
				"a\u00adlice", "a\u00ad\u00adlice", "al\u00adi\u00adce", "ali\u200bce", "alice\u200d", "al\u2060ice",
				"alice\ufeff", "\u200b alice", "alic\ufe0fe",
				// Case as String#equalsIgnoreCase folds it: the dotless i, the dotted capital I.
				"al\u0131ce", "AL\u0130CE" };
		for (String variant : variants) {
			MockHttpServletRequest request = new MockHttpServletRequest("POST", "/login");
			request.setParameter("u", variant);
			assertThat(this.keyResolvers.forSpec("param:u", "test").read(view(request))).as(variant).isEqualTo("param:alice");
			assertThat(this.keyResolvers.canonical("param:" + variant)).as(variant).isEqualTo("param:alice");
			// The actuator applies it again to a key an operator pastes: the same key.
			assertThat(KeyValues.identity(KeyValues.identity(variant))).isEqualTo(KeyValues.identity(variant));
		}
		this.request.setParameter("u", " \u3000\t");
		assertThat(resolve("param:u")).as("only spaces: no name").isEqualTo("ip:203.0.113.7");
		this.request.setParameter("u", " Alice");
		assertThat(resolve("#{param('u')}")).as("a template keys by the exact value").isEqualTo("expr: Alice");
		String longName = "Alice".repeat(20);
		this.request.setParameter("u", longName);
		assertThat(this.keyResolvers.canonical("param:" + longName)).isEqualTo(resolve("param:u"))
			.isEqualTo("param:" + KeyValues.bounded(longName.toLowerCase(Locale.ROOT)));
	}

	@Test
	void aKeyWrittenByAnOperatorIsTheKeyARequestOfThatClientGets() {
		// Each form of an address finds the key its client's requests get, with the default /32 and /64.
		String[][] forms = { { "203.0.113.7", "::ffff:203.0.113.7", "::FFFF:cb00:7107", "203.0.113.7/32" },
				{ "2001:db8:7:8::1", "2001:0DB8:0007:0008:0000:0000:0000:0001", "2001:db8:7:8:ffff::9",
						"[2001:db8:7:8::1]", "2001:db8:7:8::/64", "2001:db8:7:8:0:0:0:0/64" } };
		for (String[] client : forms) {
			this.request.setRemoteAddr(client[0]);
			String key = resolve("ip");
			for (String form : client) {
				assertThat(this.keyResolvers.canonical("ip:" + form)).as(form).isEqualTo(key);
			}
			assertThat(this.keyResolvers.canonical(key)).isEqualTo(key);
		}
		// A network of another prefix, and text that is no address, are keys no request gets: as written.
		assertThat(this.keyResolvers.canonical("ip:2001:db8::/48")).isEqualTo("ip:2001:db8::/48");
		assertThat(this.keyResolvers.canonical("ip:203.0.113.0/24")).isEqualTo("ip:203.0.113.0/24");
		assertThat(this.keyResolvers.canonical("ip:unknown")).isEqualTo("ip:unknown");
		assertThat(this.keyResolvers.canonical("ip:2001:db8::1%eth0")).isEqualTo("ip:2001:db8::1%eth0");
	}

	@Test
	void aLongValueWrittenByAnOperatorIsItsHashedKeyAndTheHashedFormItself() {
		String longValue = "a-long-api-key-".repeat(6);
		this.request.addHeader("X-Api-Key", longValue);
		String key = resolve("header:X-Api-Key");
		assertThat(key).startsWith("header:sha256:");
		assertThat(this.keyResolvers.canonical("header:" + longValue)).isEqualTo(key);
		assertThat(this.keyResolvers.canonical(key)).as("as logged").isEqualTo(key);
		// A short value that looks hashed is hashed by a request too; an untyped key is as written.
		MockHttpServletRequest lookalike = new MockHttpServletRequest("GET", "/x");
		lookalike.addHeader("X-Api-Key", "sha256:abc");
		assertThat(this.keyResolvers.canonical("header:sha256:abc"))
			.isEqualTo(this.keyResolvers.forSpec("header:X-Api-Key", "test").read(view(lookalike)))
			.isNotEqualTo("header:sha256:abc");
		assertThat(this.keyResolvers.canonical("param:alice")).isEqualTo("param:alice");
		assertThat(this.keyResolvers.canonical("global")).isEqualTo("global");
		assertThat(this.keyResolvers.canonical("tenant:" + longValue)).isEqualTo("tenant:" + longValue);
	}

	private static ServletRequestView view(HttpServletRequest request) {
		return new ServletRequestView(request, ClientIpResolver.builder().build());
	}

	private String resolve(String spec) {
		return this.keyResolvers.forSpec(spec, "test").read(view(this.request));
	}

	@Test
	void aKeyThatFailsRefusesTheRequestAndIsSaidAtWarnOnceAMinute(CapturedOutput output) {
		RequestValue failing = this.keyResolvers.forSpec("#{1/0}", "rate-limit.policies.login.key");
		MockHttpServletRequest request = new MockHttpServletRequest();
		request.setRemoteAddr("192.0.2.7");
		for (int i = 0; i < 5; i++) {
			assertThatExceptionOfType(UnreadableRequestException.class).isThrownBy(() -> failing.read(view(request)))
				.satisfies((ex) -> assertThat(ex.fallbackKey()).isEqualTo("ip:192.0.2.7"));
		}
		String warning = "rate-limit.policies.login.key cannot be told for a request";
		assertThat(output).contains(warning).contains("refused with 400");
		assertThat(output.toString().split(java.util.regex.Pattern.quote(warning), -1)).as("said once").hasSize(2);
	}

	@Test
	void parametersThatCannotBeDecodedRefuseEveryReaderOfThemAndAreReadOnce() {
		MockHttpServletRequest request = new UndecodableRequest();
		request.setParameter("u", "victim");
		for (String spec : new String[] { "param:u", "#{param('u')}", "#{request.getParameter('u')}",
				"#{request.parameterMap.size()}" }) {
			assertThatExceptionOfType(UnreadableRequestException.class).as(spec)
				.isThrownBy(() -> this.keyResolvers.forSpec(spec, "test").read(view(request)))
				.satisfies((ex) -> assertThat(ex.reason()).isEqualTo("its parameters cannot be decoded"));
		}
		assertThatExceptionOfType(UnreadableRequestException.class)
			.isThrownBy(() -> this.keyResolvers.forPlanSpec("param:u", "test").read(view(request)));
		assertThatExceptionOfType(UnreadableRequestException.class)
			.isThrownBy(() -> this.keyResolvers.condition("param('u') == 'victim'", "test").test(view(request)));
		// A resolver bean that catches the failure cannot hide it: the read is remembered.
		this.beans.registerSingleton("swallowing", (KeyResolver) (guarded) -> {
			try {
				return guarded.getParameter("u");
			}
			catch (RuntimeException ex) {
				return null;
			}
		});
		assertThatExceptionOfType(UnreadableRequestException.class)
			.isThrownBy(() -> this.keyResolvers.forSpec("@swallowing", "test").read(view(request)));
		// Keys that read no parameter are not concerned.
		request.addHeader("X-Api-Key", "k");
		assertThat(this.keyResolvers.forSpec("header:X-Api-Key", "test").read(view(request))).isEqualTo("header:k");
		assertThat(((UndecodableRequest) request).reads).as("read once").isEqualTo(1);
	}

	@Test
	void aParameterSentAsAFilePartRefusesTheRequest() {
		MockMultipartHttpServletRequest request = new MockMultipartHttpServletRequest();
		request.setContentType("multipart/form-data; boundary=x");
		request.addPart(new MockPart("u", "victim.txt", "victim".getBytes()));
		assertThatExceptionOfType(UnreadableRequestException.class)
			.isThrownBy(() -> this.keyResolvers.forSpec("param:u", "test").read(view(request)))
			.satisfies((ex) -> assertThat(ex.reason()).isEqualTo("parameter 'u' is sent as a file part"));
		MockMultipartHttpServletRequest field = new MockMultipartHttpServletRequest();
		field.setContentType("multipart/form-data; boundary=x");
		field.setParameter("u", "victim");
		field.addPart(new MockPart("u", "victim".getBytes()));
		field.addPart(new MockPart("avatar", "a.png", new byte[1]));
		assertThat(this.keyResolvers.forSpec("param:u", "test").read(view(field))).isEqualTo("param:victim");
	}

	@Test
	void aParameterKeyOnABodyWithoutParametersIsTheClientIpAndSaidAtWarn(CapturedOutput output) {
		RequestValue key = this.keyResolvers.forSpec("param:username", "rate-limit.policies.login.key");
		MockHttpServletRequest json = new MockHttpServletRequest("POST", "/login");
		json.setRemoteAddr("192.0.2.8");
		json.setContentType("application/json");
		json.setContent("{\"username\":\"victim\"}".getBytes());
		assertThat(key.read(view(json))).isEqualTo("ip:192.0.2.8");
		assertThat(key.read(view(json))).isEqualTo("ip:192.0.2.8");
		String warning = "rate-limit.policies.login.key reads parameter 'username', which a request with a body of type application/json";
		assertThat(output).contains(warning);
		assertThat(output.toString().split(java.util.regex.Pattern.quote(warning), -1)).as("said once").hasSize(2);
		json.setParameter("username", "victim");
		assertThat(key.read(view(json))).as("from the query string").isEqualTo("param:victim");
	}

	@Test
	void aHeaderKeyIsAnIdentityAndARepeatedHeaderRefusesTheRequest() {
		for (String variant : new String[] { "victim", "Victim", "victim\u00a0", " VICTIM ", "victim,other" }) {
			MockHttpServletRequest request = new MockHttpServletRequest();
			request.addHeader("X-User", variant);
			assertThat(this.keyResolvers.forSpec("header:X-User", "test").read(view(request))).as(variant)
				.isEqualTo("header:victim");
			assertThat(this.keyResolvers.canonical("header:" + variant)).as(variant).isEqualTo("header:victim");
		}
		MockHttpServletRequest blank = new MockHttpServletRequest();
		blank.setRemoteAddr("192.0.2.9");
		blank.addHeader("X-User", "\u00a0 ");
		assertThat(this.keyResolvers.forSpec("header:X-User", "test").read(view(blank))).isEqualTo("ip:192.0.2.9");
		MockHttpServletRequest twice = new MockHttpServletRequest();
		twice.addHeader("X-User", "victim");
		twice.addHeader("X-User", "other");
		for (String spec : new String[] { "header:X-User", "#{header('X-User')}" }) {
			assertThatExceptionOfType(UnreadableRequestException.class).as(spec)
				.isThrownBy(() -> this.keyResolvers.forSpec(spec, "test").read(view(twice)))
				.satisfies((ex) -> assertThat(ex.reason()).isEqualTo("header 'X-User' is sent more than once"));
		}
		assertThatExceptionOfType(UnreadableRequestException.class)
			.isThrownBy(() -> this.keyResolvers.forPlanSpec("header:X-User", "test").read(view(twice)));
	}

	@Test
	void aPlanThatCannotBeToldRefusesTheRequest() {
		this.beans.registerSingleton("brokenPlan", (KeyResolver) (request) -> {
			throw new IllegalStateException("the customer database is away");
		});
		assertThatExceptionOfType(UnreadableRequestException.class)
			.isThrownBy(() -> this.keyResolvers.forPlanSpec("@brokenPlan", "rate-limit.policies.api.plan").read(view(this.request)))
			.satisfies((ex) -> {
				assertThat(ex.reason()).isEqualTo("its plan cannot be told");
				assertThat(ex.origin()).isEqualTo("rate-limit.policies.api.plan");
			});
		assertThat(this.keyResolvers.forPlanSpec("header:X-Plan", "test").read(view(this.request))).isNull();
	}

	@Test
	void settingsThatMayReadParametersAreKnown() {
		assertThat(KeyResolvers.readsParameters("param:u")).isTrue();
		assertThat(KeyResolvers.readsParameters("@bean")).isTrue();
		assertThat(KeyResolvers.readsParameters("#{param('u')}")).isTrue();
		assertThat(KeyResolvers.readsParameters("request.getParameter('u') == 'x'")).isTrue();
		assertThat(KeyResolvers.readsParameters("ip")).isFalse();
		assertThat(KeyResolvers.readsParameters("header:X-Param")).isFalse();
		assertThat(KeyResolvers.readsParameters("#{header('X-Tenant')}")).isFalse();
		assertThat(KeyResolvers.readsParameters(null)).isFalse();
	}

	/** A request whose parameters fail to decode as Tomcat's do: the first read throws, later ones do not. */
	public static final class UndecodableRequest extends MockHttpServletRequest {

		int reads;

		public UndecodableRequest() {
			super("POST", "/login");
			setRemoteAddr("192.0.2.1");
		}

		@Override
		public java.util.Map<String, String[]> getParameterMap() {
			if (this.reads++ == 0) {
				throw new IllegalStateException("Character decoding failed");
			}
			return super.getParameterMap();
		}

	}

}
