package io.github.ratelimit.autoconfigure;

import java.io.IOException;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.boot.test.context.assertj.ApplicationContextAssertProvider;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ContextConsumer;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.PropertySource;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;
import org.springframework.core.io.ClassPathResource;

import io.github.ratelimit.core.RateLimitConfigurationException;
import io.github.ratelimit.web.policy.ConfiguredPolicy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * An unknown name under {@code rate-limit.} fails the start-up from property files and every explicit
 * source, naming it, where it is set and the closest known name; from environment variables and
 * system properties it gets one WARN.
 */
@ExtendWith(OutputCaptureExtension.class)
class UnknownPropertiesCheckTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitUnknownPropertiesAutoConfiguration.class,
				RateLimitClientAutoConfiguration.class));

	private final WebApplicationContextRunner webRunner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitUnknownPropertiesAutoConfiguration.class,
				WebMvcAutoConfiguration.class, RateLimitAutoConfiguration.class));

	@ParameterizedTest(name = "{0}")
	@CsvSource(delimiter = '|', textBlock = """
			rate-limit.policies.api.brust=20              | did you mean rate-limit.policies.api.burst?
			rate-limit.storee.type=caffeine               | did you mean rate-limit.store.type?
			rate-limit.store.caffeine.maximum-sise=5      | did you mean rate-limit.store.caffeine.maximum-size?
			rate-limit.rules[0].pathh=/x/**               | did you mean rate-limit.rules[0].path?
			rate-limit.rules[0].polices=api               | did you mean rate-limit.rules[0].policies?
			rate-limit.client-ip.trusted-proxy=10.0.0.1   | did you mean rate-limit.client-ip.trusted-proxies?
			rate-limit.client.retry.max-attemps=2         | did you mean rate-limit.client.retry.max-attempts?
			rate-limit.client.rety.enabled=true           | did you mean rate-limit.client.retry.enabled?
			rate-limit.enabeld=false                      | did you mean rate-limit.enabled?
			rate-limit.policies.api.algoritm=fixed-window | did you mean rate-limit.policies.api.algorithm?
			rate-limit.policies.api.limit.per-second=5    | rate-limit.policies.api.limit takes a value, not nested properties
			rate-limit.rules.path=/x                      | rate-limit.rules is a list: its entries are rate-limit.rules[0], rate-limit.rules[1]
			rate-limit.headers.colour=red                 | known under rate-limit.headers: 
			rate-limit.policies.login.form.limit=3        | known under rate-limit.policies.login: 
			""")
	void anUnknownPropertyFailsTheStartNamingItAndTheClosestKnownOne(String property, String hint) {
		this.webRunner.withPropertyValues("rate-limit.policies.api.limit=10", "rate-limit.policies.api.period=1m")
			.withPropertyValues(property)
			.run(failsWith(property.substring(0, property.indexOf('=')) + ": no such property, set in "
					+ "property source 'test'", hint));
	}

	@Test
	void everyKindOfKnownNameStarts() {
		this.webRunner.withInitializer(yaml("strict/valid.yml")).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(ConfiguredPolicy.names(context)).containsExactly("api", "login.form");
		});
	}

	@Test
	void aFileNamesTheFileAndTheLine() {
		this.webRunner.withInitializer(yaml("strict/typo.yml"))
			.run(failsWith("rate-limit.policies.api.brust: no such property, set in class path resource "
					+ "[strict/typo.yml] - 6:14", "Did you mean rate-limit.policies.api.burst? Rename or remove it"));
	}

	@Test
	void typosFailEvenWhenRateLimitingIsDisabled() {
		this.webRunner.withPropertyValues("rate-limit.enabled=false", "rate-limit.policies.api.limt=5")
			.run(failsWith("rate-limit.policies.api.limt", "did you mean rate-limit.policies.api.limit?"));
	}

	@Test
	void everyUnknownPropertyIsListed() {
		this.runner.withPropertyValues("rate-limit.storee.type=redis", "rate-limit.client.retry.max-delays=1s")
			.run(failsWith("rate-limit.storee.type, rate-limit.client.retry.max-delays: no such properties:",
					"- rate-limit.storee.type (property source 'test'): did you mean rate-limit.store.type?",
					"- rate-limit.client.retry.max-delays (property source 'test'): did you mean "
							+ "rate-limit.client.retry.max-delay?",
					"Rename or remove them"));
	}

	@Test
	void otherPrefixesAreLeftAlone() {
		this.runner.withPropertyValues("rate-limiter.whatever=1", "ratelimits.other=2", "spring.main.banner-mode=off")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void namesWithoutTheDashAreTheSameNames() {
		// Relaxed binding reads ratelimit.* as rate-limit.*, so it is checked the same way.
		this.runner.withPropertyValues("ratelimit.client.retry.enabled=true", "ratelimit.client.retry.max-attemps=2")
			.run(failsWith("ratelimit.client.retry.max-attemps: no such property",
					"did you mean ratelimit.client.retry.max-attempts?"));
	}

	@Test
	void environmentVariablesOnlyWarnOnceWithAllTheirNames(CapturedOutput output) {
		Map<String, Object> variables = new java.util.HashMap<>();
		variables.put("RATELIMIT_SERVICE_HOST", "10.0.0.7");
		variables.put("RATELIMIT_SERVICE_PORT", "8080");
		variables.put("RATELIMIT_PORT_8080_TCP_PROTO", "tcp");
		variables.put("RATELIMIT_POLICIES_API_LIMIT", "10");
		variables.put("RATELIMIT_POLICIES_API_PERIOD", "1m");
		variables.put("RATELIMIT_POLICIES_API_MAX_DELAY", "1s");
		variables.put("RATELIMIT_POLICIES_API_ONLIMIT", "delay");
		// Under a map, only names whose path has no dashes spelled as underscores bind.
		variables.put("RATE_LIMIT_POLICIES_OTHER_LIMIT", "5");
		variables.put("RATE_LIMIT_POLICIES_API_BURST", "50");
		variables.put("RATE_LIMIT_STORE_CAFFEINE_MAXIMUM_SIZE", "50");
		variables.put("RATE_LIMIT_RULES_0_PATH", "/api/**");
		variables.put("RATELIMIT_RULES_0_POLICIES", "api");
		this.webRunner.withInitializer(environmentVariables(variables)).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(ConfiguredPolicy.names(context)).containsExactly("api");
			assertThat(ConfiguredPolicy.of(context, "api").maxDelayNanos()).isEqualTo(1_000_000_000L);
			assertThat(ConfiguredPolicy.of(context, "api").limit().burst()).isEqualTo(10);
			assertThat(context.getBean(RateLimitProperties.class).getStore().getCaffeine().getMaximumSize())
				.isEqualTo(50);
		});
		assertThat(output).containsOnlyOnce("Ignoring names that no rate-limit property has")
			.contains("environment variables RATELIMIT_PORT_8080_TCP_PROTO, RATELIMIT_SERVICE_HOST, "
					+ "RATELIMIT_SERVICE_PORT, RATE_LIMIT_POLICIES_API_BURST, RATE_LIMIT_POLICIES_OTHER_LIMIT "
					+ "(relaxed binding reads")
			.contains("for a Service named 'ratelimit'")
			.doesNotContain("RATELIMIT_POLICIES_API_PERIOD")
			.doesNotContain("ONLIMIT")
			.doesNotContain("RATE_LIMIT_POLICIES_API_MAX")
			.doesNotContain("MAXIMUM_SIZE")
			.doesNotContain("RULES_0");
	}

	@Test
	void knownEnvironmentVariablesSayNothing(CapturedOutput output) {
		this.runner.withInitializer(environmentVariables(Map.of("RATE_LIMIT_CLIENT_RETRY_ENABLED", "true",
				"RATELIMIT_CLIENT_RETRY_MAXATTEMPTS", "2", "rate_limit_client_retry_methods_0", "GET", "PATH", "/bin")))
			.run((context) -> assertThat(context).hasNotFailed());
		assertThat(output).doesNotContain("Ignoring names");
	}

	@Test
	void systemPropertiesOnlyWarn(CapturedOutput output) {
		this.webRunner.withSystemProperties("rate-limit.policies.api.brust=20")
			.withPropertyValues("rate-limit.policies.api.limit=10", "rate-limit.policies.api.period=1m")
			.run((context) -> assertThat(context).hasNotFailed());
		assertThat(output).containsOnlyOnce("Ignoring names that no rate-limit property has: system property "
				+ "rate-limit.policies.api.brust (did you mean rate-limit.policies.api.burst?)");
	}

	@Test
	void namesComeFromTheBoundClasses(CapturedOutput output) {
		Map<ConfigurationPropertyName, Class<?>> roots = Map.of(name("rate-limit"), Sample.class);
		for (String known : List.of("rate-limit.nested.depth", "rate-limit.nested.deeper",
				"rate-limit.by-name.a.depth", "rate-limit.labels.any.thing.with.dots", "rate-limit.items[0].depth",
				"rate-limit.values[0]", "rate-limit.point.x", "rate-limit.windows.a.size", "rate-limit.windows.a.max-count",
				"rate-limit.read-only")) {
			assertThat(UnknownPropertiesCheck.isKnown(roots, name(known))).as(known).isTrue();
		}
		assertThat(UnknownPropertiesCheck.isKnown(roots, ConfigurationPropertyName.adapt("rate-limit.windows.a.maxCount", '.')))
			.isTrue();
		assertThat(UnknownPropertiesCheck.isKnown(roots, name("rate-limit.items.depth"))).isFalse();
		// A read-only value: the binder asks for it, and then fails the binding itself (no setter).
		assertThat(UnknownPropertiesCheck.isKnown(roots, name("rate-limit.computed"))).isTrue();
		assertThatExceptionOfType(BindException.class).isThrownBy(() -> new Binder(
				new MapConfigurationPropertySource(Map.of("rate-limit.computed", "x"))).bind("rate-limit", Sample.class))
			.withStackTraceContaining("No setter found for property: computed");
		// Spring Boot binds no class within itself: Nested's deeper is a value to it, never a Nested to descend into.
		assertThat(UnknownPropertiesCheck.isKnown(roots, name("rate-limit.nested.deeper.deeper.depth"))).isFalse();
		assertThatExceptionOfType(RateLimitConfigurationException.class)
			.isThrownBy(() -> check(roots, new MapPropertySource("test", Map.of("rate-limit.windows.a.max-cont", "1"))))
			.withMessageContaining("Did you mean rate-limit.windows.a.max-count?");
		assertThatExceptionOfType(RateLimitConfigurationException.class)
			.isThrownBy(() -> check(roots, new MapPropertySource("test", Map.of("rate-limit.point.z", "1"))))
			.withMessageContaining("Known under rate-limit.point: x, y");
		Map<String, Object> variables = new java.util.HashMap<>();
		for (String variable : List.of("RATELIMIT_BYNAME_A_DEPTH", "RATE_LIMIT_BY_NAME_A_DEPTH",
				"RATE_LIMIT_BY_NAME_B_DEPTH", "RATELIMIT_NESTED_DEEPER_DEEPER_DEPTH", "RATE_LIMIT_READ_ONLY_DEPTH",
				"RATELIMIT_READ_ONLY_DEPTH", "RATE_LIMIT_ITEMS_X_DEPTH", "RATE_LIMIT_ITEMS_0_DEPTH",
				"RATE_LIMIT_ITEMS_2_DEPTH", "RATELIMIT_NESTED_WIDTH", "RATELIMIT_LABELS_ANY_THING", "PATH")) {
			variables.put(variable, "1");
		}
		check(roots, new SystemEnvironmentPropertySource(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
				variables));
		// What Spring Boot reads no value from: a list's index after a gap, a class within itself (deeper).
		assertThat(output).contains("environment variables RATELIMIT_NESTED_DEEPER_DEEPER_DEPTH, RATELIMIT_NESTED_WIDTH, "
				+ "RATELIMIT_READ_ONLY_DEPTH, RATE_LIMIT_BY_NAME_A_DEPTH, RATE_LIMIT_BY_NAME_B_DEPTH, "
				+ "RATE_LIMIT_ITEMS_2_DEPTH, RATE_LIMIT_ITEMS_X_DEPTH (relaxed");
		// A read-only nested object, without the dash: read (alone, as two variables for one name are one read).
		check(roots, new SystemEnvironmentPropertySource(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
				Map.of("RATELIMIT_READONLY_DEPTH", "1")));
		assertThat(output).doesNotContain("RATELIMIT_READONLY_DEPTH");
	}

	private static void check(Map<ConfigurationPropertyName, Class<?>> roots, PropertySource<?> source) {
		StandardEnvironment environment = new StandardEnvironment();
		environment.getPropertySources().remove(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME);
		environment.getPropertySources().remove(StandardEnvironment.SYSTEM_PROPERTIES_PROPERTY_SOURCE_NAME);
		environment.getPropertySources().addFirst(source);
		new UnknownPropertiesCheck(environment, roots).check();
	}

	@Test
	void closeMeansAFewEditsAway() {
		assertThat(UnknownPropertiesCheck.distance("brust", "burst")).isEqualTo(1);
		assertThat(UnknownPropertiesCheck.distance("storee", "store")).isEqualTo(1);
		assertThat(UnknownPropertiesCheck.distance("limt", "limit")).isEqualTo(1);
		assertThat(UnknownPropertiesCheck.distance("colour", "style")).isEqualTo(6);
	}

	private static org.springframework.boot.context.properties.source.ConfigurationPropertyName name(String name) {
		return org.springframework.boot.context.properties.source.ConfigurationPropertyName.of(name);
	}

	private static <C extends ConfigurableApplicationContext> org.springframework.context.ApplicationContextInitializer<C> yaml(
			String path) {
		return (context) -> {
			try {
				List<PropertySource<?>> sources = new YamlPropertySourceLoader().load(path, new ClassPathResource(path));
				sources.forEach(context.getEnvironment().getPropertySources()::addFirst);
			}
			catch (IOException ex) {
				throw new IllegalStateException(ex);
			}
		};
	}

	private static <C extends ConfigurableApplicationContext> org.springframework.context.ApplicationContextInitializer<C> environmentVariables(
			Map<String, Object> variables) {
		return (context) -> context.getEnvironment()
			.getPropertySources()
			.replace(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, new SystemEnvironmentPropertySource(
					StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, variables));
	}

	private static <C extends ApplicationContextAssertProvider<?>> ContextConsumer<C> failsWith(
			String... messages) {
		return (context) -> {
			assertThat(context).hasFailed();
			Throwable failure = context.getStartupFailure();
			while (!(failure instanceof RateLimitConfigurationException) && failure.getCause() != null) {
				failure = failure.getCause();
			}
			assertThat(failure).isInstanceOf(RateLimitConfigurationException.class);
			for (String message : messages) {
				assertThat(failure.getMessage()).containsIgnoringCase(message);
			}
		};
	}

	/** A class with every shape a bound class can have. */
	static class Sample {

		private final Sample.Nested nested = new Nested();

		private final Sample.Nested readOnly = new Nested();

		private Map<String, Nested> byName = Map.of();

		private Map<String, String> labels = Map.of();

		private List<Nested> items = List.of();

		private List<String> values = List.of();

		private Point point = new Point(0, 0);

		private Map<String, Window> windows = Map.of();

		public Map<String, Window> getWindows() {
			return this.windows;
		}

		public void setWindows(Map<String, Window> windows) {
			this.windows = windows;
		}

		public Nested getNested() {
			return this.nested;
		}

		public Nested getReadOnly() {
			return this.readOnly;
		}

		public String getComputed() {
			return "computed";
		}

		public Map<String, Nested> getByName() {
			return this.byName;
		}

		public void setByName(Map<String, Nested> byName) {
			this.byName = byName;
		}

		public Map<String, String> getLabels() {
			return this.labels;
		}

		public void setLabels(Map<String, String> labels) {
			this.labels = labels;
		}

		public List<Nested> getItems() {
			return this.items;
		}

		public void setItems(List<Nested> items) {
			this.items = items;
		}

		public List<String> getValues() {
			return this.values;
		}

		public void setValues(List<String> values) {
			this.values = values;
		}

		public Point getPoint() {
			return this.point;
		}

		public void setPoint(Point point) {
			this.point = point;
		}

		static class Nested {

			private int depth;

			private Nested deeper;

			public int getDepth() {
				return this.depth;
			}

			public void setDepth(int depth) {
				this.depth = depth;
			}

			public Nested getDeeper() {
				return this.deeper;
			}

			public void setDeeper(Nested deeper) {
				this.deeper = deeper;
			}

		}

		record Point(int x, int y) {
		}

		/** Bound through its constructor: its getters have no setters. */
		static class Window {

			private final java.time.Duration size;

			private final int maxCount;

			Window(java.time.Duration size, int maxCount) {
				this.size = size;
				this.maxCount = maxCount;
			}

			public java.time.Duration getSize() {
				return this.size;
			}

			public int getMaxCount() {
				return this.maxCount;
			}

		}

	}

}
