package io.github.ratelimit.autoconfigure;

import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.bind.AbstractBindHandler;
import org.springframework.boot.context.properties.bind.BindContext;
import org.springframework.boot.context.properties.bind.BindHandler;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.UnboundConfigurationPropertiesException;
import org.springframework.boot.context.properties.bind.handler.NoUnboundElementsBindHandler;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName.Form;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.origin.Origin;
import org.springframework.boot.origin.PropertySourceOrigin;
import org.springframework.boot.origin.SystemEnvironmentOrigin;
import org.springframework.core.ResolvableType;

/**
 * Records what the binder does: the names it asks for (with their types), the variables it reads, and
 * the names {@link NoUnboundElementsBindHandler} finds unbound. Errors of values are left to the
 * binding of the properties beans, which reports them.
 */
final class BindRecorder {

	final Map<ConfigurationPropertyName, ResolvableType> started = new HashMap<>();

	final Set<String> read = new HashSet<>();

	final Map<ConfigurationPropertyName, ConfigurationProperty> unbound = new LinkedHashMap<>();

	private final Map<ConfigurationPropertyName, Class<?>> roots;

	private @Nullable ConfigurationPropertyName root;

	BindRecorder(Map<ConfigurationPropertyName, Class<?>> roots) {
		this.roots = roots;
	}

	BindHandler handler(ConfigurationPropertyName root, Function<ConfigurationPropertySource, Boolean> checked) {
		this.root = root;
		return new AbstractBindHandler(new NoUnboundElementsBindHandler(BindHandler.DEFAULT, checked)) {

			@Override
			public <T> @Nullable Bindable<T> onStart(ConfigurationPropertyName name, Bindable<T> target,
					BindContext context) {
				BindRecorder.this.started.putIfAbsent(name, target.getType());
				return super.onStart(name, target, context);
			}

			@Override
			public @Nullable Object onSuccess(ConfigurationPropertyName name, Bindable<?> target,
					BindContext context, Object result) {
				read(context);
				return super.onSuccess(name, target, context, result);
			}

			@Override
			public @Nullable Object onFailure(ConfigurationPropertyName name, Bindable<?> target,
					BindContext context, Exception error) {
				read(context);
				if (error instanceof UnboundConfigurationPropertiesException unknown) {
					unbound(unknown); // from the root, or from a list's element
				}
				// Not passed on: the parents (NoUnboundElementsBindHandler, then the default) would only rethrow it.
				return null;
			}

		};
	}

	/** Notes the variable a value came from (its name as the environment spells it). */
	private void read(BindContext context) {
		ConfigurationProperty property = context.getConfigurationProperty();
		Origin origin = (property != null) ? property.getOrigin() : null;
		if (origin instanceof PropertySourceOrigin propertySourceOrigin) {
			this.read.add(propertySourceOrigin.getPropertyName());
			origin = propertySourceOrigin.getOrigin();
		}
		if (origin instanceof SystemEnvironmentOrigin variable) {
			this.read.add(variable.getProperty());
		}
	}

	/** Keeps the names unbound, but those under an inner root (rate-limit.client): the inner root's to judge. */
	void unbound(UnboundConfigurationPropertiesException ex) {
		for (ConfigurationProperty property : ex.getUnboundProperties()) {
			if (!this.started.containsKey(property.getName()) && owner(property.getName()).equals(this.root)) {
				this.unbound.putIfAbsent(property.getName(), property);
			}
		}
	}

	private ConfigurationPropertyName owner(ConfigurationPropertyName name) {
		ConfigurationPropertyName owner = name;
		for (ConfigurationPropertyName prefix : this.roots.keySet()) {
			if (prefix.equals(name) || prefix.isAncestorOf(name)) {
				owner = prefix;
			}
		}
		return owner;
	}

	/** The index of the first element of the name that the binder never asked for. */
	int firstUnknown(ConfigurationPropertyName name) {
		for (int i = 1; i < name.getNumberOfElements(); i++) {
			if (!this.started.containsKey(name.chop(i + 1))) {
				return i;
			}
		}
		return name.getNumberOfElements() - 1;
	}

	/** rules[0].polices[0] and rules[0].polices[1] are one unknown name: rules[0].polices. */
	ConfigurationPropertyName withoutTrailingIndexes(ConfigurationPropertyName name, int index) {
		int shown = name.getNumberOfElements();
		while (shown > index + 1 && name.isNumericIndex(shown - 1)) {
			shown--;
		}
		return name.chop(shown);
	}

	/** What to do: the closest name, or the names that exist where this one was written. */
	String hint(ConfigurationPropertyName name, int index) {
		ConfigurationPropertyName known = name.chop(index);
		Set<String> here = new TreeSet<>();
		this.started.keySet().stream().filter(known::isParentOf).forEach((n) -> here.add(n.getLastElement(Form.DASHED)));
		String element = name.getElement(index, Form.UNIFORM);
		String best = null;
		int bestDistance = Integer.MAX_VALUE;
		for (String candidate : here) {
			String uniform = candidate.replace("-", "");
			int distance = UnknownPropertiesCheck.distance(element, uniform);
			int shorter = Math.min(element.length(), uniform.length());
			if (distance < bestDistance && distance <= ((shorter < 3) ? 0 : Math.max(1, shorter / 3))) {
				best = candidate;
				bestDistance = distance;
			}
		}
		if (best != null) {
			ConfigurationPropertyName corrected = known.append(best);
			ConfigurationPropertyName full = corrected.append(name.subName(index + 1));
			ConfigurationPropertyName suggested = UnknownPropertiesCheck.isKnown(this.roots, full)
					? withoutTrailingIndexes(full, index) : corrected;
			return "did you mean " + suggested + "?";
		}
		ResolvableType type = this.started.get(known);
		Class<?> resolved = (type != null) ? type.resolve(Object.class) : Object.class;
		if (Collection.class.isAssignableFrom(resolved) || resolved.isArray()) {
			return known + " is a list: its entries are " + known + "[0], " + known + "[1], ...";
		}
		if (here.isEmpty()) {
			return known + " takes a value, not nested properties";
		}
		return "known under " + known + ": " + String.join(", ", here);
	}

}
