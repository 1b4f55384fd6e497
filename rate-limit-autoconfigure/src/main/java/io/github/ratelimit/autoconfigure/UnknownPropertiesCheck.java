package io.github.ratelimit.autoconfigure;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.config.BeanFactoryPostProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.bind.PropertySourcesPlaceholdersResolver;
import org.springframework.boot.context.properties.bind.handler.NoUnboundElementsBindHandler;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName.Form;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.boot.origin.Origin;
import org.springframework.boot.origin.PropertySourceOrigin;
import org.springframework.core.Ordered;
import org.springframework.core.env.CommandLinePropertySource;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.PropertySource;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;
import org.springframework.util.ClassUtils;

import io.github.ratelimit.core.RateLimitConfigurationException;

/**
 * Fails the start-up on a name under {@code rate-limit.} that nothing binds, before any bean is created: a
 * typo ({@code rate-limit.policies.api.brust}) would otherwise leave a limit other than the one written,
 * silently. Spring Boot's binder says which names bind: the property classes are bound with a
 * {@link NoUnboundElementsBindHandler}; the failure names each unknown property, where it is set, and the
 * closest name the binder asked for.
 * <p>
 * Property files, command-line arguments and every other explicit source fail the start-up. Environment
 * variables and system properties only get one WARN: platforms set variables the application did not
 * choose (Kubernetes sets {@code RATELIMIT_SERVICE_HOST} for a Service named {@code ratelimit}, which
 * relaxed binding reads as {@code rate-limit.service.host}).
 */
final class UnknownPropertiesCheck implements BeanFactoryPostProcessor, Ordered {

	private static final Log logger = LogFactory.getLog(UnknownPropertiesCheck.class);

	private static final String REDIS_PROPERTIES = "io.github.ratelimit.redis.autoconfigure.RedisRateLimitProperties";

	private static final String WHY = "an unknown name under rate-limit.* stops the start-up, so that a typo cannot "
			+ "leave a limit other than the one written (from environment variables and system properties it is "
			+ "only logged)";

	private final ConfigurableEnvironment environment;

	private final Map<ConfigurationPropertyName, Class<?>> roots;

	UnknownPropertiesCheck(ConfigurableEnvironment environment, Map<ConfigurationPropertyName, Class<?>> roots) {
		this.environment = environment;
		this.roots = roots;
	}

	/**
	 * The classes bound under {@code rate-limit}, by prefix, outer ones first.
	 * @param classLoader where the Redis module's properties may be found
	 * @return the prefixes and their classes
	 */
	static Map<ConfigurationPropertyName, Class<?>> roots(@Nullable ClassLoader classLoader) {
		Map<ConfigurationPropertyName, Class<?>> roots = new LinkedHashMap<>();
		roots.put(ConfigurationPropertyName.of("rate-limit"), RateLimitProperties.class);
		roots.put(ConfigurationPropertyName.of("rate-limit.client"), RateLimitClientProperties.class);
		if (ClassUtils.isPresent(REDIS_PROPERTIES, classLoader)) {
			roots.put(ConfigurationPropertyName.of("rate-limit.store.redis"),
					ClassUtils.resolveClassName(REDIS_PROPERTIES, classLoader));
		}
		return roots;
	}

	/**
	 * Says whether the binder binds the name, when it is set alone (with its list indexes from 0: a list of
	 * a higher source replaces the whole list, leaving the names of a lower one's elements unbound).
	 * @param roots the classes bound, by prefix
	 * @param name a name under {@code rate-limit}
	 * @return {@code true} when the binder asks for it
	 */
	static boolean isKnown(Map<ConfigurationPropertyName, Class<?>> roots, ConfigurationPropertyName name) {
		StringBuilder fromZero = new StringBuilder(name.getElement(0, Form.ORIGINAL));
		for (int i = 1; i < name.getNumberOfElements(); i++) {
			String element = name.getElement(i, Form.ORIGINAL);
			fromZero.append(name.isNumericIndex(i) ? "[0]"
					: element.contains(".") ? "[" + element + "]" : "." + element);
		}
		Binder binder = new Binder(new MapConfigurationPropertySource(Map.of(fromZero.toString(), "")));
		return bind(roots, binder, (source) -> false).started.containsKey(ConfigurationPropertyName.adapt(fromZero, '.'));
	}

	@Override
	public int getOrder() {
		return Ordered.HIGHEST_PRECEDENCE;
	}

	@Override
	public void postProcessBeanFactory(ConfigurableListableBeanFactory beanFactory) {
		check();
	}

	/**
	 * Checks every name under {@code rate-limit.} of the environment.
	 * @throws RateLimitConfigurationException naming the unknown properties of explicit sources
	 */
	void check() {
		Binder binder = new Binder(ConfigurationPropertySources.get(this.environment),
				new PropertySourcesPlaceholdersResolver(this.environment));
		BindRecorder recorder = bind(this.roots, binder,
				(source) -> !(source.getUnderlyingSource() instanceof SystemEnvironmentPropertySource));
		Map<String, String[]> failures = new LinkedHashMap<>();
		Set<String> systemProperties = new LinkedHashSet<>();
		for (ConfigurationProperty property : recorder.unbound.values()) {
			ConfigurationPropertyName name = property.getName();
			if (isKnown(this.roots, name)) {
				continue; // an element of a list that a higher source replaced
			}
			int index = recorder.firstUnknown(name);
			String shown = recorder.withoutTrailingIndexes(name, index).toString();
			String hint = recorder.hint(name, index);
			PropertySource<?> source = (PropertySource<?>) property.getSource().getUnderlyingSource();
			if (StandardEnvironment.SYSTEM_PROPERTIES_PROPERTY_SOURCE_NAME.equals(source.getName())) {
				systemProperties.add(shown + " (" + hint + ")");
			}
			else {
				failures.putIfAbsent(shown, new String[] { shown, origin(property, source), hint });
			}
		}
		warn(unknownVariables(), systemProperties);
		if (failures.size() == 1) {
			String[] failure = failures.values().iterator().next();
			throw new RateLimitConfigurationException(failure[0], "no such property, set in " + failure[1],
					Character.toUpperCase(failure[2].charAt(0)) + failure[2].substring(1) + " Rename or remove it: " + WHY);
		}
		if (!failures.isEmpty()) {
			throw new RateLimitConfigurationException(String.join(", ", failures.keySet()), "no such properties:"
					+ String.join("", failures.values().stream()
						.map((failure) -> "\n    - " + failure[0] + " (" + failure[1] + "): " + failure[2])
						.toList()),
					"Rename or remove them: " + WHY);
		}
	}

	/**
	 * The environment variables read as {@code rate-limit.*} ({@code RATELIMIT_*}, {@code RATE_LIMIT_*}) that
	 * the binder reads none of, binding from the variables alone.
	 */
	private Set<String> unknownVariables() {
		Set<String> unknown = new TreeSet<>();
		for (PropertySource<?> source : this.environment.getPropertySources()) {
			if (source instanceof SystemEnvironmentPropertySource variables) {
				Set<String> read = bind(this.roots, new Binder(ConfigurationPropertySources.from(variables)),
						(any) -> false).read;
				for (String variable : variables.getPropertyNames()) {
					String spelt = variable.toUpperCase(Locale.ROOT).replace('.', '_').replace('-', '_');
					if ((spelt.startsWith("RATELIMIT_") || spelt.startsWith("RATE_LIMIT_")) && !read.contains(variable)) {
						unknown.add(variable);
					}
				}
			}
		}
		return unknown;
	}

	/** Binds every root, recording the names asked for and the names that bound nothing. */
	private static BindRecorder bind(Map<ConfigurationPropertyName, Class<?>> roots, Binder binder,
			Function<ConfigurationPropertySource, Boolean> checked) {
		BindRecorder recorder = new BindRecorder(roots);
		roots.forEach((prefix, type) -> binder.bind(prefix, Bindable.of(type), recorder.handler(prefix, checked)));
		return recorder;
	}

	private static void warn(Set<String> variables, Set<String> systemProperties) {
		List<String> parts = new ArrayList<>();
		if (!variables.isEmpty()) {
			parts.add("environment variable" + ((variables.size() > 1) ? "s " : " ") + String.join(", ", variables)
					+ " (relaxed binding reads RATELIMIT_* and RATE_LIMIT_* as rate-limit.*, and map entries only "
					+ "from names without dashes, such as RATELIMIT_POLICIES_API_LIMIT; Kubernetes sets "
					+ "RATELIMIT_SERVICE_HOST and the like for a Service named 'ratelimit')");
		}
		if (!systemProperties.isEmpty()) {
			parts.add("system propert" + ((systemProperties.size() > 1) ? "ies " : "y ")
					+ String.join(", ", systemProperties));
		}
		if (!parts.isEmpty()) {
			logger.warn("Ignoring names that no rate-limit property has: " + String.join("; ", parts));
		}
	}

	private static String origin(ConfigurationProperty property, PropertySource<?> source) {
		if (CommandLinePropertySource.COMMAND_LINE_PROPERTY_SOURCE_NAME.equals(source.getName())) {
			return "the command line";
		}
		Origin origin = property.getOrigin();
		if (origin instanceof PropertySourceOrigin propertySourceOrigin) {
			origin = propertySourceOrigin.getOrigin();
		}
		return (origin != null) ? origin.toString() : "property source '" + source.getName() + "'";
	}

	/** Optimal string alignment distance: edits, where swapping two neighbours is one edit. */
	static int distance(String a, String b) {
		int[][] d = new int[a.length() + 1][b.length() + 1];
		for (int i = 0; i <= a.length(); i++) {
			d[i][0] = i;
		}
		for (int j = 0; j <= b.length(); j++) {
			d[0][j] = j;
		}
		for (int i = 1; i <= a.length(); i++) {
			for (int j = 1; j <= b.length(); j++) {
				int cost = (a.charAt(i - 1) == b.charAt(j - 1)) ? 0 : 1;
				d[i][j] = Math.min(Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + cost);
				if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1)) {
					d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
				}
			}
		}
		return d[a.length()][b.length()];
	}
}
