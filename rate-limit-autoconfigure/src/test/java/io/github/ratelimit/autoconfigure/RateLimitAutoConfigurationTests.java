package io.github.ratelimit.autoconfigure;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableWebApplicationContext;
import org.springframework.boot.test.context.runner.ContextConsumer;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.servlet.DispatcherServlet;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.CaffeineRateLimitStore;
import io.github.ratelimit.core.Decision;
import io.github.ratelimit.core.RateLimitClock;
import io.github.ratelimit.core.RateLimitConfigurationException;
import io.github.ratelimit.core.RateLimitStore;
import io.github.ratelimit.test.ManualClock;
import io.github.ratelimit.web.CountMode;
import io.github.ratelimit.web.HeaderStyle;
import io.github.ratelimit.web.OnLimit;
import io.github.ratelimit.web.RateLimitRejectionHandler;
import io.github.ratelimit.web.RateLimited;
import io.github.ratelimit.web.policy.ConfiguredPolicy;

import static org.assertj.core.api.Assertions.assertThat;

@ExtendWith(OutputCaptureExtension.class)
class RateLimitAutoConfigurationTests {

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(WebMvcAutoConfiguration.class, RateLimitAutoConfiguration.class));

	@Test
	void registersTheFilterAndTheCaffeineStoreByDefault() {
		this.runner.run((context) -> {
			assertThat(context).hasSingleBean(CaffeineRateLimitStore.class);
			assertThat(context).hasBean("clientIpResolver");
			assertThat(context).getBean(RateLimitClock.class).isSameAs(RateLimitClock.SYSTEM);
			FilterRegistrationBean<?> registration = context.getBean(FilterRegistrationBean.class);
			assertThat(registration.getFilter().getClass().getName())
				.isEqualTo("io.github.ratelimit.web.servlet.RateLimitFilter");
			assertThat(registration.getOrder()).isEqualTo(RateLimitProperties.DEFAULT_FILTER_ORDER).isEqualTo(-90)
				.isEqualTo(new RateLimitProperties().getFilterOrder())
				.isGreaterThan(-100); // after Spring Security's filter chain
			assertThat(registration.determineDispatcherTypes()).containsExactlyInAnyOrder(
					jakarta.servlet.DispatcherType.REQUEST, jakarta.servlet.DispatcherType.ASYNC);
		});
	}

	@ParameterizedTest(name = "algorithm={0}")
	@CsvSource({ "token-bucket, TOKEN_BUCKET", "TOKEN_BUCKET, TOKEN_BUCKET", "tokenBucket, TOKEN_BUCKET",
			"sliding-window-log, SLIDING_WINDOW_LOG", "slidingWindowLog, SLIDING_WINDOW_LOG", "Fixed_Window, FIXED_WINDOW" })
	void theAlgorithmBindsLeniently(String value, Algorithm algorithm) {
		this.runner.withPropertyValues("rate-limit.policies.api.limit=10", "rate-limit.policies.api.period=1m",
				"rate-limit.policies.api.algorithm=" + value)
			.run((context) -> assertThat(ConfiguredPolicy.of(context, "api").limit().algorithm())
				.isEqualTo(algorithm));
	}

	@Test
	void theInProcessStoreKeepsTheCoresDefaultBound() {
		assertThat(new RateLimitProperties().getStore().getCaffeine().getMaximumSize())
			.isEqualTo(CaffeineRateLimitStore.DEFAULT_MAXIMUM_SIZE)
			.isEqualTo(1_000_000);
	}

	@Test
	void theClientIpDefaultsAreThoseBoundWhenNothingIsSet() {
		assertThat(new RateLimitProperties().getClientIp())
			.isEqualTo(new Binder().bindOrCreate("rate-limit.client-ip", ClientIpProperties.class));
	}

	@Test
	void filterOrderIsConfigurable() {
		this.runner.withPropertyValues("rate-limit.filter-order=42")
			.run((context) -> assertThat(context.getBean(FilterRegistrationBean.class).getOrder()).isEqualTo(42));
	}

	@Test
	void disabledRegistersNothing() {
		this.runner.withPropertyValues("rate-limit.enabled=false", "rate-limit.policies.api.limit=0").run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context).doesNotHaveBean(RateLimitStore.class);
			assertThat(context).doesNotHaveBean(FilterRegistrationBean.class);
			assertThat(context).doesNotHaveBean(RateLimitProperties.class);
		});
	}

	@Test
	void refreshedPoliciesApplyOnlyWithSpringCloudOnTheClassPath() {
		this.runner.run((context) -> assertThat(context).hasBean("rateLimitPolicyRefresh"));
		this.runner.withClassLoader(new FilteredClassLoader("org.springframework.cloud"))
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean("rateLimitPolicyRefresh"));
	}

	@Test
	void backsOffWithoutSpringMvc() {
		this.runner.withClassLoader(new FilteredClassLoader(DispatcherServlet.class))
			.run((context) -> assertThat(context).doesNotHaveBean(RateLimitStore.class));
	}

	@Test
	void userBeansWin() {
		this.runner.withUserConfiguration(UserBeans.class).run((context) -> {
			assertThat(context).getBean(RateLimitStore.class).isSameAs(context.getBean("myStore"));
			assertThat(context).getBean(RateLimitRejectionHandler.class).isSameAs(context.getBean("myHandler"));
			assertThat(context).getBean(RateLimitClock.class).isInstanceOf(ManualClock.class);
			assertThat(context).doesNotHaveBean(CaffeineRateLimitStore.class);
		});
	}

	@Test
	void userFilterRegistrationStandsBesideOurs() {
		// The filter is internal: an application's registration is another filter, not a replacement.
		this.runner.withUserConfiguration(UserFilter.class)
			.run((context) -> assertThat(context.getBeansOfType(FilterRegistrationBean.class)).containsOnlyKeys("custom",
					"rateLimitFilter"));
	}

	@Test
	void bindsPoliciesWithDefaults() {
		this.runner.withPropertyValues("rate-limit.policies.api.limit=100", "rate-limit.policies.api.period=1m")
			.run((context) -> {
				var policy = ConfiguredPolicy.of(context, "api");
				assertThat(policy).isNotNull();
				assertThat(policy.limit().burst()).isEqualTo(100);
				assertThat(policy.keySpec()).isEqualTo("ip");
				assertThat(policy.cost()).isEqualTo(1);
			});
	}

	@ParameterizedTest(name = "{0}={1}")
	@CsvSource(delimiter = '|', textBlock = """
			rate-limit.policies.api.limit     | 0            | rate-limit.policies.api.limit: limit must be positive, was 0
			rate-limit.policies.api.limit     | -3           | rate-limit.policies.api.limit: limit must be positive, was -3
			rate-limit.policies.api.period    | 0s           | rate-limit.policies.api.period: period must be positive
			rate-limit.policies.api.period    | -1m          | rate-limit.policies.api.period: period must be positive
			rate-limit.policies.api.period    | 60           | rate-limit.policies.api.period: the duration '60' has no unit, which Spring Boot reads as milliseconds. Write it with its unit, e.g. 60s, or 60ms if milliseconds are meant
			rate-limit.policies.api.max-delay | 500          | rate-limit.policies.api.max-delay: the duration '500' has no unit
			rate-limit.policies.api.burst     | 0            | rate-limit.policies.api.burst: burst must be positive
			rate-limit.policies.api.cost      | 11           | rate-limit.policies.api.cost: cost must be between 1 and the burst (10), was 11
			rate-limit.policies.api.key       | cookie:x     | rate-limit.policies.api.key: unknown key 'cookie:x'
			rate-limit.policies.api.key       | header:      | rate-limit.policies.api.key: key 'header:' names nothing after 'header:'
			rate-limit.policies.api.key       | header:X Y   | rate-limit.policies.api.key: 'X Y' is not an HTTP header name. Write the header's name as requests carry it, e.g. header:X-Api-Key
			rate-limit.policies.api.key       | param:       | rate-limit.policies.api.key: key 'param:' names nothing after 'param:'. Write e.g. param:username
			rate-limit.policies.api.key       | #{ip +}      | rate-limit.policies.api.key: cannot parse the SpEL key '#{ip +}'
			rate-limit.policies.api.key       | @missing     | rate-limit.policies.api.key: no bean named 'missing'
			rate-limit.rules[0].policies      | nope         | rate-limit.rules[0].policies: no policy named 'nope'. Define it under rate-limit.policies.nope (defined: api)
			rate-limit.rules[0].path          | /api/**/x    | rate-limit.rules[0].path: cannot parse the path pattern '/api/**/x'
			rate-limit.rules[0].path          | api/hello    | rate-limit.rules[0].path: the path pattern 'api/hello' does not start with '/', so it matches no request. Write it from the root, e.g. /api/hello
			rate-limit.rules[0].methods       | GE T         | rate-limit.rules[0].methods: 'GE T' is not an HTTP method
			rate-limit.client-ip.trusted-proxies | 10.0.0.0/33 | rate-limit.client-ip.trusted-proxies[0]: '10.0.0.0/33' is not a valid CIDR
			rate-limit.client-ip.trusted-proxies | example.com | rate-limit.client-ip.trusted-proxies[0]: 'example.com'
			rate-limit.store.caffeine.maximum-size | 0      | rate-limit.store.caffeine.maximum-size: maximum size must be positive, was 0
			rate-limit.policies.api.on-limit  | delay        | rate-limit.policies.api.max-delay: on-limit: delay needs a positive max-delay
			rate-limit.policies.api.max-delay | 2s           | rate-limit.policies.api.max-delay: max-delay is set but on-limit is reject
			rate-limit.store.type             | redis        | rate-limit.store.type: store type 'redis' has no store on the classpath. Add io.github.ratelimit:rate-limit-redis
			""")
	void badConfigurationFailsTheStartNamingTheProperty(String property, String value, String message) {
		this.runner
			.withPropertyValues("rate-limit.policies.api.limit=10", "rate-limit.policies.api.period=1m",
					"rate-limit.rules[0].path=/api/**", "rate-limit.rules[0].policies=api", property + "=" + value)
			.run(failsWith(message));
	}

	@ParameterizedTest(name = "{0}")
	@CsvSource(delimiter = '|', textBlock = """
			slow-down.after=5                        | rate-limit.policies.login.slow-down.after: after (5) must be below the burst (5): at the burst a key is locked out, never slowed down. Lower after, or raise the burst
			slow-down.after=-1                       | rate-limit.policies.login.slow-down.after: after must not be negative, was -1
			slow-down.after=                         | rate-limit.policies.login.slow-down.after: no after is set
			slow-down.delay=0s                       | rate-limit.policies.login.slow-down.delay: delay must be positive, was PT0S. Set the first delay, e.g. 1s
			slow-down.delay=1                        | rate-limit.policies.login.slow-down.delay: the duration '1' has no unit
			slow-down.max-delay=8                    | rate-limit.policies.login.slow-down.max-delay: the duration '8' has no unit
			slow-down.max-delay=500ms                | rate-limit.policies.login.slow-down.max-delay: max-delay (PT0.5S) is below delay (PT1S)
			algorithm=concurrency;period=;count=all  | rate-limit.policies.login.slow-down: slow-down does not apply to algorithm: concurrency
			on-limit=delay;max-delay=1s;count=all    | rate-limit.policies.login.slow-down: slow-down cannot go with on-limit: delay: one policy either waits for its turn or slows down
			plan=header:X-Plan;plans.trial.limit=2   | rate-limit.policies.login.slow-down.after: after (2) must be below the burst (2) of the policy and of each of its plans
			""")
	void badSlowDownFailsTheStartNamingTheProperty(String settings, String message) {
		List<String> properties = new ArrayList<>(List.of("rate-limit.policies.login.limit=5",
				"rate-limit.policies.login.period=15m", "rate-limit.policies.login.key=param:username",
				"rate-limit.policies.login.count=failures", "rate-limit.policies.login.slow-down.after=2",
				"rate-limit.policies.login.slow-down.delay=1s", "rate-limit.policies.login.slow-down.max-delay=8s"));
		for (String setting : settings.split(";")) {
			properties.add("rate-limit.policies.login." + setting);
		}
		this.runner.withPropertyValues(properties.toArray(String[]::new)).run(failsWith(message));
	}

	@ParameterizedTest(name = "{0}")
	@CsvSource(delimiter = '|', textBlock = """
			ban.after=0                              | rate-limit.policies.login.ban.after: after must be at least 1, was 0. Set how many lockout answers ban a key, e.g. 3
			ban.after=                               | rate-limit.policies.login.ban.after: no after is set
			ban.duration=                            | rate-limit.policies.login.ban.duration: no duration is set
			ban.duration=0s                          | rate-limit.policies.login.ban.duration: it must be positive and at most 100 years, was PT0S
			ban.duration=24                          | rate-limit.policies.login.ban.duration: the duration '24' has no unit
			ban.within=60                            | rate-limit.policies.login.ban.within: the duration '60' has no unit
			ban.within=-1h                           | rate-limit.policies.login.ban.within: it must be positive and at most 100 years, was PT-1H
			algorithm=concurrency;period=            | rate-limit.policies.login.ban: ban does not apply to algorithm: concurrency
			""")
	void badBanFailsTheStartNamingTheProperty(String settings, String message) {
		List<String> properties = new ArrayList<>(List.of("rate-limit.policies.login.limit=5",
				"rate-limit.policies.login.period=15m", "rate-limit.policies.login.ban.after=3",
				"rate-limit.policies.login.ban.duration=24h"));
		for (String setting : settings.split(";")) {
			properties.add("rate-limit.policies.login." + setting);
		}
		this.runner.withPropertyValues(properties.toArray(String[]::new)).run(failsWith(message));
	}

	@Test
	void aBanOnAStoreThatBansNobodyFailsTheStart() {
		this.runner.withBean(RateLimitStore.class, () -> new RateLimitStore() {

			@Override
			public Decision tryAcquire(Acquisition acquisition) {
				return Decision.allowed(1, 1, 0);
			}

			@Override
			public Decision release(Acquisition acquisition) {
				return Decision.allowed(1, 1, 0);
			}

			@Override
			public Decision peek(Acquisition acquisition) {
				return Decision.allowed(1, 1, 0);
			}

			@Override
			public void reset(String limitId, String key) {
			}

		}).withPropertyValues("rate-limit.policies.login.limit=5", "rate-limit.policies.login.period=15m",
				"rate-limit.policies.login.ban.after=3", "rate-limit.policies.login.ban.duration=24h")
			.run(failsWith("rate-limit.policies.login.ban: the store "))
			.run(failsWith("does not ban keys. Use rate-limit.store.type caffeine or redis, or remove ban"));
	}

	@Test
	void aSlowDownIsAllowedUnderEveryAlgorithmWithABudgetAndEveryCount() {
		for (String algorithm : List.of("token-bucket", "leaky-bucket", "fixed-window", "sliding-window-log",
				"sliding-window-counter")) {
			for (String count : List.of("all", "failures", "successes")) {
				this.runner.withPropertyValues("rate-limit.policies.login.algorithm=" + algorithm,
						"rate-limit.policies.login.limit=5", "rate-limit.policies.login.period=15m",
						"rate-limit.policies.login.count=" + count, "rate-limit.policies.login.slow-down.after=0",
						"rate-limit.policies.login.slow-down.delay=1s", "rate-limit.policies.login.slow-down.max-delay=1s")
					.run((context) -> assertThat(context).hasNotFailed());
			}
		}
	}

	@Test
	void policiesOfOneSourceWhoseNamesDifferOnlyInCaseOrDashesFailTheStart() {
		// Spring Boot binds them as one policy: per-user would have taken peruser's key: global.
		this.runner
			.withPropertyValues("rate-limit.policies.per-user.limit=2", "rate-limit.policies.per-user.period=1h",
					"rate-limit.policies.peruser.limit=1000", "rate-limit.policies.peruser.period=1s",
					"rate-limit.policies.peruser.key=global")
			.run(failsWith("rate-limit.policies.peruser: policies 'per-user' and 'peruser' are one policy to Spring Boot, "
					+ "which compares names without case and dashes, so each would take values of the other. Rename one of them"));
		this.runner
			.withPropertyValues("rate-limit.policies.strict.limit=2", "rate-limit.policies.strict.period=1h",
					"rate-limit.policies.STRICT.limit=1000", "rate-limit.policies.STRICT.period=1s")
			.run(failsWith("policies 'strict' and 'STRICT' are one policy"));
	}

	@Test
	void aPolicySpeltOtherwiseInAnotherSourceIsTheSamePolicy() {
		// As an environment variable (RATE_LIMIT_POLICIES_PERUSER_PERIOD) sets a value of application.yml's perUser.
		this.runner.withPropertyValues("rate-limit.policies.perUser.limit=2")
			.withSystemProperties("rate-limit.policies.peruser.period=1h")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(ConfiguredPolicy.of(context, "perUser").limit().period()).hasHours(1);
			});
	}

	@Test
	void aDurationWithoutAUnitIsJudgedAsItWillBeBound() {
		// A placeholder's default, a plan's period: as bound.
		this.runner.withPropertyValues("rate-limit.policies.api.limit=10", "rate-limit.policies.api.period=${API_PERIOD:60}")
			.run(failsWith("rate-limit.policies.api.period: the duration '60' has no unit"));
		this.runner
			.withPropertyValues("rate-limit.policies.api.limit=10", "rate-limit.policies.api.period=1m",
					"rate-limit.policies.api.key=header:X-Api-Key", "rate-limit.policies.api.plan=header:X-Plan",
					"rate-limit.policies.api.plans.pro.limit=100", "rate-limit.policies.api.plans.pro.period=3600")
			.run(failsWith("rate-limit.policies.api.plans.pro.period: the duration '3600' has no unit"));
		// A source that does not win is not judged: only the value bound is.
		this.runner.withSystemProperties("rate-limit.policies.api.period=60")
			.withPropertyValues("rate-limit.policies.api.limit=10", "rate-limit.policies.api.period=1m")
			.run((context) -> assertThat(ConfiguredPolicy.of(context, "api").limit().period()).hasMinutes(1));
	}

	@Test
	void aPolicyNameTheRateLimitHeadersCannotCarryFailsTheStart() {
		// Sent as "?berweisung" in RateLimit, while the 429's body says "Überweisung".
		this.runner.withPropertyValues("rate-limit.policies[Überweisung].limit=5", "rate-limit.policies[Überweisung].period=1m")
			.run(failsWith("rate-limit.policies.Überweisung: the policy name 'Überweisung' has characters other than "
					+ "printable ASCII, which the RateLimit headers cannot carry"));
	}

	@Test
	void aLimitOfMoreThan15DigitsFailsTheStart() {
		this.runner.withPropertyValues("rate-limit.policies.api.limit=1000000000000000", "rate-limit.policies.api.period=365d")
			.run(failsWith("rate-limit.policies.api.limit: limit must be at most 999,999,999,999,999 (15 digits, what "
					+ "the RateLimit headers can carry), was 1000000000000000"));
	}

	@Test
	void trustingOrExemptingEveryAddressIsWarnedAbout(CapturedOutput output) {
		this.runner
			.withPropertyValues("rate-limit.policies.api.limit=10", "rate-limit.policies.api.period=1m",
					"rate-limit.client-ip.trusted-proxies=10.0.0.0/8,0.0.0.0/0", "rate-limit.exempt.ips=::/0")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(output).contains("rate-limit.client-ip.trusted-proxies[1] is '0.0.0.0/0', every address of its "
						+ "family: every client is then a trusted proxy")
					.contains("rate-limit.exempt.ips[0] is '::/0', every address of its family: no client of that family is "
							+ "limited by any policy")
					.doesNotContain("trusted-proxies[0]");
			});
	}

	@Test
	void aMaxDelayOfMoreThanAHundredYearsFailsTheStart() {
		// Beyond that, a reservation's time could wrap around and read as a full bucket.
		this.runner
			.withPropertyValues("rate-limit.policies.api.limit=1", "rate-limit.policies.api.period=36500d",
					"rate-limit.policies.api.on-limit=delay", "rate-limit.policies.api.max-delay=36501d")
			.run(failsWith("rate-limit.policies.api.max-delay: max-delay must be at most 100 years, was PT876024H"));
	}

	@ParameterizedTest(name = "{0}={1}")
	@CsvSource(delimiter = '|', textBlock = """
			rate-limit.policies.api.algorithm | magic-bucket | io.github.ratelimit.core.Algorithm
			rate-limit.policies.api.on-limit  | wait         | io.github.ratelimit.web.OnLimit
			rate-limit.policies.api.count     | errors       | io.github.ratelimit.web.CountMode
			rate-limit.mode                   | dry-run      | io.github.ratelimit.autoconfigure.RateLimitProperties$Mode
			rate-limit.store.type             | memcached    | io.github.ratelimit.autoconfigure.RateLimitProperties$StoreType
			""")
	void aValueOutsideAnEnumFailsTheStartNamingTheProperty(String property, String value, String type) {
		this.runner.withPropertyValues("rate-limit.policies.api.limit=10", "rate-limit.policies.api.period=1m",
				property + "=" + value)
			.run((context) -> {
				assertThat(context).hasFailed();
				Throwable failure = context.getStartupFailure();
				while (!(failure instanceof BindException) && failure.getCause() != null) {
					failure = failure.getCause();
				}
				assertThat(failure).isInstanceOf(BindException.class);
				BindException bind = (BindException) failure;
				assertThat(bind.getProperty().getName()).hasToString(property);
				assertThat(bind.getProperty().getValue()).isEqualTo(value);
				assertThat(bind.getTarget().getType().resolve()).hasToString("class " + type);
			});
	}

	@Test
	void enumValuesBindInKebabCaseAndInAnyCase() {
		this.runner
			.withPropertyValues("rate-limit.policies.api.limit=10", "rate-limit.policies.api.period=1m",
					"rate-limit.policies.api.algorithm=sliding-window-counter", "rate-limit.policies.api.count=FAILURES",
					"rate-limit.policies.b.limit=10", "rate-limit.policies.b.period=1m",
					"rate-limit.policies.b.algorithm=Leaky_Bucket", "rate-limit.policies.b.on-limit=delay",
					"rate-limit.policies.b.max-delay=1s", "rate-limit.mode=shadow")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				RateLimitProperties properties = context.getBean(RateLimitProperties.class);
				assertThat(properties.getPolicies().get("api").algorithm()).isEqualTo(Algorithm.SLIDING_WINDOW_COUNTER);
				assertThat(properties.getPolicies().get("api").count()).isEqualTo(CountMode.FAILURES);
				assertThat(properties.getPolicies().get("b").algorithm()).isEqualTo(Algorithm.LEAKY_BUCKET);
				assertThat(properties.getPolicies().get("b").onLimit()).isEqualTo(OnLimit.DELAY);
				assertThat(properties.getMode()).isEqualTo(RateLimitProperties.Mode.SHADOW);
				assertThat(ConfiguredPolicy.of(context, "api").limit().algorithm())
					.isEqualTo(Algorithm.SLIDING_WINDOW_COUNTER);
			});
	}

	@Test
	void algorithmSettingsThatCannotWorkAreNamed() {
		String[] base = { "rate-limit.policies.api.limit=10", "rate-limit.policies.api.period=1m" };
		this.runner.withPropertyValues(base)
			.withPropertyValues("rate-limit.policies.api.algorithm=fixed-window", "rate-limit.policies.api.on-limit=delay",
					"rate-limit.policies.api.max-delay=1s")
			.run(failsWith("rate-limit.policies.api.on-limit: on-limit: delay needs an algorithm with a turn to wait for; "
					+ "fixed-window has none. Use token-bucket or leaky-bucket"));
		this.runner.withPropertyValues(base)
			.withPropertyValues("rate-limit.policies.api.algorithm=sliding-window-counter", "rate-limit.policies.api.burst=20")
			.run(failsWith("rate-limit.policies.api.burst: burst does not apply to sliding-window-counter"));
		this.runner
			.withPropertyValues("rate-limit.policies.api.algorithm=sliding-window-log", "rate-limit.policies.api.limit=50000",
					"rate-limit.policies.api.period=1h")
			.run(failsWith("rate-limit.policies.api.limit: sliding-window-log keeps one timestamp"));
		this.runner.withPropertyValues(base)
			.withPropertyValues("rate-limit.policies.api.algorithm=leaky-bucket", "rate-limit.policies.api.on-limit=delay",
					"rate-limit.policies.api.max-delay=500ms")
			.run((context) -> assertThat(ConfiguredPolicy.of(context, "api").maxDelayNanos())
				.isEqualTo(500_000_000L));
	}

	@Test
	void missingLimitAndPeriodAreNamed() {
		this.runner.withPropertyValues("rate-limit.policies.api.period=1m")
			.run(failsWith("rate-limit.policies.api.limit: no limit is set"));
		this.runner.withPropertyValues("rate-limit.policies.api.limit=5")
			.run(failsWith("rate-limit.policies.api.period: no period is set"));
	}

	@Test
	void badAnnotationsFailTheStartNamingTheMethod() {
		this.runner.withUserConfiguration(UnknownPolicyController.class)
			.run(failsWith("@RateLimited(\"nope\") on " + UnknownPolicyController.class.getName()
					+ "#hello(): no policy named 'nope'"));
		this.runner.withUserConfiguration(BadPeriodController.class)
			.run(failsWith("@RateLimited(period) on " + BadPeriodController.class.getName()
					+ "#hello(): cannot read the period 'soon'"));
		this.runner.withUserConfiguration(ShadowingNameController.class)
			.withPropertyValues("rate-limit.policies.api.limit=10", "rate-limit.policies.api.period=1m")
			.run(failsWith("@RateLimited(name) on " + ShadowingNameController.class.getName()
					+ "#hello(): the inline limit is named 'api', as a policy of rate-limit.policies, but is a budget of "
					+ "its own"));
		this.runner.withUserConfiguration(TwiceNamedController.class)
			.run(failsWith("@RateLimited(name) on " + TwiceNamedController.class.getName()
					+ "#hello(): two limits of this method are named 'twice'"));
		this.runner.withUserConfiguration(UnitlessPeriodController.class)
			.run(failsWith("@RateLimited(period) on " + UnitlessPeriodController.class.getName()
					+ "#hello(): the period '60' has no unit, which would be read as milliseconds. Write it with its unit, e.g. 60s"));
		this.runner.withUserConfiguration(NoLimitController.class)
			.run(failsWith("@RateLimited(limit) on " + NoLimitController.class.getName() + "#hello(): no limit is set"));
		this.runner.withPropertyValues("rate-limit.policies.api.limit=10", "rate-limit.policies.api.period=1m")
			.withUserConfiguration(MixedController.class)
			.run(failsWith("names a policy and also sets inline attributes"));
	}

	@Test
	void headerStylesBindOneOrAListAndRefuseAClashNobodyAskedFor() {
		this.runner.withPropertyValues("rate-limit.headers.style=legacy, draft-6").run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean(RateLimitProperties.class).getHeaders().style())
				.containsExactly(HeaderStyle.LEGACY, HeaderStyle.DRAFT_6);
		});
		this.runner.withPropertyValues("rate-limit.headers.style[0]=ietf", "rate-limit.headers.style[1]=DRAFT_6")
			.run((context) -> assertThat(context).hasNotFailed());
		this.runner.withPropertyValues("rate-limit.headers.style=legacy,ietf,draft-6")
			.run((context) -> assertThat(context).hasNotFailed());
		this.runner.withPropertyValues("rate-limit.headers.style=both")
			.run((context) -> assertThat(context.getBean(RateLimitProperties.class).getHeaders().style())
				.containsExactly(HeaderStyle.BOTH));
		this.runner.withPropertyValues("rate-limit.headers.style=both,draft-6")
			.run(failsWith("rate-limit.headers.style: both (legacy and ietf) and draft-6 would send draft 11's"));
		this.runner.withPropertyValues("rate-limit.headers.style=none,legacy")
			.run(failsWith("rate-limit.headers.style: none is listed with none, legacy"));
		this.runner.withPropertyValues("rate-limit.headers.style=")
			.run(failsWith("rate-limit.headers.style: no header style is set"));
		this.runner.withPropertyValues("rate-limit.headers.style=draft-7").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure())
				.hasStackTraceContaining("Failed to bind properties under 'rate-limit.headers.style'");
		});
	}

	@Test
	void maxWaitingMustBePositive() {
		this.runner.withPropertyValues("rate-limit.delay.max-waiting=0")
			.run(failsWith("rate-limit.delay.max-waiting: max-waiting must be positive, was 0"));
	}

	@Test
	void failureAnalysisSaysWhereWhatAndWhatToDo() {
		FailureAnalysis analysis = new RateLimitConfigurationFailureAnalyzer().analyze(new IllegalStateException(
				new RateLimitConfigurationException("rate-limit.policies.api.limit", "limit must be positive, was 0",
						"Set a positive number of requests per period")));
		assertThat(analysis.getDescription())
			.isEqualTo("Invalid rate limit configuration at rate-limit.policies.api.limit: limit must be positive, was 0.");
		assertThat(analysis.getAction()).isEqualTo("Set a positive number of requests per period.");
	}

	@Test
	void unsetParkingKeepsWaitingRequestsOnTheirThreadsWhenAFilterDoesNotSeeAsyncDispatches(CapturedOutput output) {
		this.runner.withBean("apiKeyFilter", jakarta.servlet.Filter.class,
				() -> (request, response, chain) -> chain.doFilter(request, response))
			.run((context) -> assertThat(context).hasNotFailed());
		assertThat(output).contains("Requests that wait for their turn hold their threads: the filters [apiKeyFilter]"
				+ " do not see the async dispatch that would resume a parked request");
		this.runner.withPropertyValues("rate-limit.delay.park=false")
			.withBean("quietFilter", jakarta.servlet.Filter.class,
					() -> (request, response, chain) -> chain.doFilter(request, response))
			.run((context) -> assertThat(context).hasNotFailed());
		assertThat(output).doesNotContain("[quietFilter]");
	}

	@Test
	void parkingFailsTheStartUpWhenAFilterDoesNotSeeAsyncDispatches() {
		this.runner.withPropertyValues("rate-limit.delay.park=true")
			.withBean("apiKeyFilter", jakarta.servlet.Filter.class,
					() -> (request, response, chain) -> chain.doFilter(request, response))
			.run(failsWith("rate-limit.delay.park: a parked request resumes as an async dispatch, which the filters "
					+ "[apiKeyFilter] do not see"));
		this.runner.withPropertyValues("rate-limit.delay.park=true")
			.withBean("apiKeyFilter", org.springframework.boot.web.servlet.FilterRegistrationBean.class, () -> {
				org.springframework.boot.web.servlet.FilterRegistrationBean<jakarta.servlet.Filter> registration =
						new org.springframework.boot.web.servlet.FilterRegistrationBean<>(
								(request, response, chain) -> chain.doFilter(request, response));
				registration.setDispatcherTypes(jakarta.servlet.DispatcherType.REQUEST,
						jakarta.servlet.DispatcherType.ASYNC);
				return registration;
			})
			.run((context) -> assertThat(context).hasNotFailed());
	}

	private static ContextConsumer<AssertableWebApplicationContext> failsWith(String message) {
		return (context) -> {
			assertThat(context).hasFailed();
			Throwable failure = context.getStartupFailure();
			while (!(failure instanceof RateLimitConfigurationException) && failure.getCause() != null) {
				failure = failure.getCause();
			}
			assertThat(failure).isInstanceOf(RateLimitConfigurationException.class);
			assertThat(failure.getMessage()).contains(message);
		};
	}

	@Configuration(proxyBeanMethods = false)
	static class UserBeans {

		@Bean
		RateLimitStore myStore() {
			return new RateLimitStore() {
				@Override
				public Decision tryAcquire(Acquisition acquisition) {
					return Decision.allowed(1, 1, 0);
				}

				@Override
				public Decision release(Acquisition acquisition) {
					return Decision.allowed(1, 1, 0);
				}

				@Override
				public Decision peek(Acquisition acquisition) {
					return Decision.allowed(1, 1, 0);
				}

				@Override
				public void reset(String limitId, String key) {
				}
			};
		}

		@Bean
		RateLimitRejectionHandler myHandler() {
			return (request, response, result) -> response.setStatus(503);
		}

		@Bean
		ManualClock clock() {
			return new ManualClock();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UserFilter {

		@Bean
		FilterRegistrationBean<?> custom() {
			return new FilterRegistrationBean<>();
		}

	}

	@RestController
	static class UnknownPolicyController {

		@GetMapping("/hello")
		@RateLimited("nope")
		String hello() {
			return "hello";
		}

	}

	@RestController
	static class ShadowingNameController {

		@GetMapping("/hello")
		@RateLimited(name = "api", limit = 5, period = "1m")
		String hello() {
			return "hello";
		}

	}

	@RestController
	static class TwiceNamedController {

		@GetMapping("/hello")
		@RateLimited(name = "twice", limit = 5, period = "1m")
		@RateLimited(name = "twice", limit = 50, period = "1h")
		String hello() {
			return "hello";
		}

	}

	@RestController
	static class UnitlessPeriodController {

		@GetMapping("/hello")
		@RateLimited(limit = 5, period = "60")
		String hello() {
			return "hello";
		}

	}

	@RestController
	static class BadPeriodController {

		@GetMapping("/hello")
		@RateLimited(limit = 5, period = "soon")
		String hello() {
			return "hello";
		}

	}

	@RestController
	static class NoLimitController {

		@GetMapping("/hello")
		@RateLimited(period = "1m")
		String hello() {
			return "hello";
		}

	}

	@RestController
	static class MixedController {

		@GetMapping("/hello")
		@RateLimited(value = "api", limit = 5)
		String hello() {
			return "hello";
		}

	}

}
