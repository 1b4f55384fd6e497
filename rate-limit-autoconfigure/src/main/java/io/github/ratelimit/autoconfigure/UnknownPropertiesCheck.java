package io.github.ratelimit.autoconfigure;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.config.BeanFactoryPostProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;
import org.springframework.boot.origin.Origin;
import org.springframework.boot.origin.PropertySourceOrigin;
import org.springframework.core.Ordered;
import org.springframework.core.env.CommandLinePropertySource;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.EnumerablePropertySource;
import org.springframework.core.env.PropertySource;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

import io.github.ratelimit.core.RateLimitConfigurationException;

/**
 * Fails the start-up on a name under {@code rate-limit.} that nothing binds, before any bean is
 * created: a typo ({@code rate-limit.policies.api.brust}) would otherwise leave a limit other than
 * the one written, silently. The failure names each unknown property, where it is set, and the
 * closest known name.
 * <p>
 * Property files, command-line arguments and every other explicit source fail the start-up.
 * Environment variables and system properties only get one WARN: platforms set variables the
 * application did not choose (Kubernetes sets {@code RATELIMIT_SERVICE_HOST} for a Service named
 * {@code ratelimit}, which relaxed binding reads as {@code rate-limit.service.host}).
 */
final class UnknownPropertiesCheck implements BeanFactoryPostProcessor, Ordered {

	private static final Log logger = LogFactory.getLog(UnknownPropertiesCheck.class);

	private final ConfigurableEnvironment environment;

	private final RateLimitPropertyNames names;

	UnknownPropertiesCheck(ConfigurableEnvironment environment, RateLimitPropertyNames names) {
		this.environment = environment;
		this.names = names;
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
		Map<String, Finding> failures = new LinkedHashMap<>();
		Set<String> variables = new TreeSet<>();
		Set<String> systemProperties = new LinkedHashSet<>();
		for (PropertySource<?> source : this.environment.getPropertySources()) {
			if (!(source instanceof EnumerablePropertySource<?> enumerable)) {
				continue;
			}
			if (source instanceof SystemEnvironmentPropertySource) {
				variables.addAll(this.names.unknownEnvironmentVariables(List.of(enumerable.getPropertyNames())));
				continue;
			}
			boolean warnOnly = StandardEnvironment.SYSTEM_PROPERTIES_PROPERTY_SOURCE_NAME.equals(source.getName());
			if (!(ConfigurationPropertySource.from(source) instanceof IterableConfigurationPropertySource properties)) {
				continue;
			}
			properties.stream().filter(RateLimitPropertyNames::isUnder).forEach((name) -> {
				RateLimitPropertyNames.Unknown unknown = this.names.check(name);
				if (unknown == null) {
					return;
				}
				String shown = unknown.name().toString();
				if (warnOnly) {
					systemProperties.add(shown + " (" + unknown.hint() + ")");
				}
				else {
					failures.putIfAbsent(shown, new Finding(shown, origin(properties, name, source), unknown.hint()));
				}
			});
		}
		warn(variables, systemProperties);
		if (failures.size() == 1) {
			Finding failure = failures.values().iterator().next();
			throw new RateLimitConfigurationException(failure.name(), "no such property, set in " + failure.origin(),
					capitalize(failure.hint()) + " Rename or remove it: " + WHY);
		}
		if (!failures.isEmpty()) {
			throw new RateLimitConfigurationException(
					String.join(", ", failures.keySet()),
					"no such properties:" + String.join("", failures.values().stream()
						.map((failure) -> "\n    - " + failure.name() + " (" + failure.origin() + "): " + failure.hint())
						.toList()),
					"Rename or remove them: " + WHY);
		}
	}

	private static final String WHY = "an unknown name under rate-limit.* stops the start-up, so that a typo cannot "
			+ "leave a limit other than the one written (from environment variables and system properties it is "
			+ "only logged)";

	private static void warn(Set<String> variables, Set<String> systemProperties) {
		if (variables.isEmpty() && systemProperties.isEmpty()) {
			return;
		}
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
		logger.warn("Ignoring names that no rate-limit property has: " + String.join("; ", parts));
	}

	private static String origin(ConfigurationPropertySource properties, ConfigurationPropertyName name,
			PropertySource<?> source) {
		if (CommandLinePropertySource.COMMAND_LINE_PROPERTY_SOURCE_NAME.equals(source.getName())) {
			return "the command line";
		}
		ConfigurationProperty property = properties.getConfigurationProperty(name);
		Origin origin = (property != null) ? property.getOrigin() : null;
		if (origin instanceof PropertySourceOrigin propertySourceOrigin) {
			origin = propertySourceOrigin.getOrigin();
		}
		if (origin == null) {
			return "property source '" + source.getName() + "'";
		}
		return origin.toString();
	}

	private record Finding(String name, String origin, String hint) {
	}

	private static String capitalize(String text) {
		return Character.toUpperCase(text.charAt(0)) + text.substring(1);
	}

}
