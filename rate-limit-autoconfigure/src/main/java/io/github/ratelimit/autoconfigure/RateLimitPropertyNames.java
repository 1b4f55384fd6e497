package io.github.ratelimit.autoconfigure;

import java.beans.PropertyDescriptor;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Constructor;
import java.lang.reflect.Parameter;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Enumeration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.beans.BeanUtils;
import org.springframework.boot.context.properties.bind.BindConstructorProvider;
import org.springframework.boot.context.properties.bind.DataObjectPropertyName;
import org.springframework.boot.context.properties.bind.Name;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName.Form;
import org.springframework.boot.json.JsonParserFactory;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.core.ResolvableType;
import org.springframework.util.ClassUtils;
import org.springframework.util.StreamUtils;

/**
 * The names under {@code rate-limit.} that something binds: read from the
 * {@code @ConfigurationProperties} classes (their JavaBean properties or, for classes bound through
 * a constructor such as records, its parameters; map values and list elements, recursively) and from the configuration metadata on the class path, so
 * a property added to one of these classes is known without being listed anywhere. Immutable once
 * built, and so thread-safe.
 */
final class RateLimitPropertyNames {

	static final ConfigurationPropertyName ROOT = ConfigurationPropertyName.of("rate-limit");

	private static final String METADATA = "META-INF/spring-configuration-metadata.json";

	/** The classes bound under {@code rate-limit}, by prefix; a missing one is skipped. */
	private static final Map<String, String> ROOTS = Map.of("rate-limit", RateLimitProperties.class.getName(),
			"rate-limit.client", RateLimitClientProperties.class.getName(), "rate-limit.store.redis",
			"io.github.ratelimit.redis.autoconfigure.RedisRateLimitProperties");

	private static final ParameterNameDiscoverer PARAMETER_NAMES = new DefaultParameterNameDiscoverer();

	private final Node root = new Node(Kind.OBJECT, null);

	private final Map<Class<?>, Node> objects = new HashMap<>();

	private RateLimitPropertyNames() {
	}

	/**
	 * Reads the names bound by the rate limit's property classes and listed in the metadata that the
	 * class loader sees.
	 * @param classLoader where the property classes and metadata files are found
	 * @return the names
	 */
	static RateLimitPropertyNames load(@Nullable ClassLoader classLoader) {
		RateLimitPropertyNames names = new RateLimitPropertyNames();
		ROOTS.forEach((prefix, className) -> {
			if (ClassUtils.isPresent(className, classLoader)) {
				names.mount(prefix, ClassUtils.resolveClassName(className, classLoader));
			}
		});
		names.readMetadata(classLoader);
		return names;
	}

	/**
	 * Builds the names bound by the given classes only (tests).
	 * @param roots prefix to class
	 * @return the names
	 */
	static RateLimitPropertyNames of(Map<String, Class<?>> roots) {
		RateLimitPropertyNames names = new RateLimitPropertyNames();
		roots.forEach(names::mount);
		return names;
	}

	/**
	 * Says whether something binds the name, or what the closest known name is.
	 * @param name a name under {@code rate-limit}
	 * @return {@code null} when the name is known
	 */
	@Nullable Unknown check(ConfigurationPropertyName name) {
		if (!isUnder(name)) {
			return null;
		}
		Node node = this.root;
		int count = name.getNumberOfElements();
		for (int i = 1; i < count; i++) {
			switch (node.kind) {
				case ANY -> {
					return null;
				}
				case MAP -> {
					if (node.element.kind == Kind.ANY || node.element.kind == Kind.VALUE) {
						// Map<String, scalar>: the rest of the name is the key, dots and all.
						return null;
					}
					node = node.element;
				}
				case LIST -> {
					if (!isNumber(name.getElement(i, Form.ORIGINAL))) {
						return unknown(name, i, node);
					}
					node = node.element;
				}
				case OBJECT -> {
					Node child = node.children.get(name.getElement(i, Form.UNIFORM));
					if (child == null) {
						return unknown(name, i, node);
					}
					node = child;
				}
				case VALUE -> {
					return unknown(name, i, node);
				}
			}
		}
		return null;
	}

	/**
	 * Finds the environment variables that would be read as {@code rate-limit.*} properties but bind
	 * nothing, the way Spring Boot maps variables to names: each dashed element either without its
	 * dashes or with underscores for them, the same way throughout ({@code RATELIMIT_FILTERORDER} or
	 * {@code RATE_LIMIT_FILTER_ORDER}); map entries ({@code rate-limit.policies.<name>}) are only
	 * found from the form without dashes ({@code RATELIMIT_POLICIES_API_LIMIT}), after which the
	 * entry's own names take either form.
	 * @param variables names of environment variables
	 * @return those among them that bind nothing, in their order
	 */
	List<String> unknownEnvironmentVariables(Collection<String> variables) {
		List<String> unknown = new ArrayList<>();
		for (String variable : variables) {
			List<String> words = List.of(
					variable.toUpperCase(Locale.ROOT).replace('.', '_').replace('-', '_').split("_", -1));
			boolean known;
			if (words.get(0).equals("RATELIMIT")) {
				known = matches(this.root, words, 1, false, false);
			}
			else if (words.size() >= 2 && words.get(0).equals("RATE") && words.get(1).equals("LIMIT")) {
				known = matches(this.root, words, 2, true, true);
			}
			else {
				continue;
			}
			if (!known) {
				unknown.add(variable);
			}
		}
		return unknown;
	}

	/**
	 * Matches words from {@code from} on against the node.
	 * @param legacy whether dashed names are spelled with underscores ({@code MAX_DELAY}) rather than
	 * without dashes ({@code MAXDELAY})
	 * @param split whether a name so far was spelled with underscores for its dashes, which hides map
	 * entries from the binder
	 */
	private boolean matches(Node node, List<String> words, int from, boolean legacy, boolean split) {
		if (from == words.size()) {
			return true;
		}
		return switch (node.kind) {
			case ANY -> true;
			case VALUE -> false;
			case LIST -> isNumber(words.get(from)) && matches(node.element, words, from + 1, legacy, split);
			case MAP -> !split && (node.element.kind == Kind.ANY || node.element.kind == Kind.VALUE
					|| matches(node.element, words, from + 1, false, false)
					|| matches(node.element, words, from + 1, true, false));
			case OBJECT -> {
				for (Node child : node.children.values()) {
					String name = child.name.toUpperCase(Locale.ROOT);
					String[] spelled = legacy ? name.split("-") : new String[] { name.replace("-", "") };
					if (startsWith(words, from, spelled)
							&& matches(child, words, from + spelled.length, legacy, split || spelled.length > 1)) {
						yield true;
					}
				}
				yield false;
			}
		};
	}

	private static boolean startsWith(List<String> words, int from, String... expected) {
		if (words.size() - from < expected.length) {
			return false;
		}
		for (int i = 0; i < expected.length; i++) {
			if (!words.get(from + i).equals(expected[i])) {
				return false;
			}
		}
		return true;
	}

	private static boolean isNumber(String word) {
		return !word.isEmpty() && word.chars().allMatch(Character::isDigit);
	}

	private Unknown unknown(ConfigurationPropertyName name, int index, Node parent) {
		ConfigurationPropertyName known = name.chop(index);
		List<String> here = new ArrayList<>();
		parent.children.values().forEach((child) -> here.add(child.name));
		String element = name.getElement(index, Form.UNIFORM);
		String best = null;
		int bestDistance = Integer.MAX_VALUE;
		for (String candidate : here) {
			String uniform = candidate.replace("-", "");
			int distance = distance(element, uniform);
			int shorter = Math.min(element.length(), uniform.length());
			if (distance < bestDistance && distance <= ((shorter < 3) ? 0 : Math.max(1, shorter / 3))) {
				best = candidate;
				bestDistance = distance;
			}
		}
		String suggestion = null;
		if (best != null) {
			ConfigurationPropertyName corrected = known.append(best);
			ConfigurationPropertyName rest = name.subName(index + 1);
			ConfigurationPropertyName full = corrected.append(rest);
			suggestion = (check(full) == null) ? full.toString() : corrected.toString();
		}
		// rules[0].polices[0] and rules[0].polices[1] are one unknown name: rules[0].polices
		int shown = name.getNumberOfElements();
		while (shown > index + 1 && name.isNumericIndex(shown - 1)) {
			shown--;
		}
		String shownSuggestion = suggestion;
		if (suggestion != null && shown < name.getNumberOfElements()) {
			ConfigurationPropertyName suggested = ConfigurationPropertyName.of(suggestion);
			shownSuggestion = suggested.chop(suggested.getNumberOfElements() - (name.getNumberOfElements() - shown))
				.toString();
		}
		return new Unknown(name.chop(shown), known, shownSuggestion, List.copyOf(here), parent.kind == Kind.LIST);
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

	private void mount(String prefix, Class<?> type) {
		Node node = path(ConfigurationPropertyName.of(prefix));
		Node object = object(type);
		object.children.forEach(node.children::putIfAbsent);
	}

	/** The object node at the name, created (empty) along the way where missing. */
	private Node path(ConfigurationPropertyName name) {
		Node node = this.root;
		for (int i = 1; i < name.getNumberOfElements(); i++) {
			String element = name.getElement(i, Form.DASHED);
			Node current = node;
			node = current.children.computeIfAbsent(element.replace("-", ""), (key) -> new Node(Kind.OBJECT, element));
			if (node.kind != Kind.OBJECT) {
				return new Node(Kind.OBJECT, element);
			}
		}
		return node;
	}

	private Node object(Class<?> type) {
		Node existing = this.objects.get(type);
		if (existing != null) {
			return existing;
		}
		Node node = new Node(Kind.OBJECT, null);
		this.objects.put(type, node);
		Constructor<?> constructor = BindConstructorProvider.DEFAULT.getBindConstructor(type, false);
		if (constructor != null) {
			// Bound through its constructor (a record, or a class without a default constructor).
			String[] names = PARAMETER_NAMES.getParameterNames(constructor);
			Parameter[] parameters = constructor.getParameters();
			for (int i = 0; i < parameters.length; i++) {
				Name name = parameters[i].getAnnotation(Name.class);
				String propertyName = (name != null) ? name.value()
						: (names != null) ? names[i] : parameters[i].getName();
				add(node, propertyName, ResolvableType.forConstructorParameter(constructor, i));
			}
			return node;
		}
		for (PropertyDescriptor descriptor : BeanUtils.getPropertyDescriptors(type)) {
			Method getter = descriptor.getReadMethod();
			Method setter = descriptor.getWriteMethod();
			if ("class".equals(descriptor.getName()) || (getter == null && setter == null)) {
				continue;
			}
			ResolvableType propertyType = (getter != null) ? ResolvableType.forMethodReturnType(getter, type)
					: ResolvableType.forMethodParameter(setter, 0, type);
			if (setter == null && describe(propertyType).kind == Kind.VALUE) {
				continue; // a read-only value binds nothing
			}
			add(node, descriptor.getName(), propertyType);
		}
		return node;
	}

	private void add(Node node, String propertyName, ResolvableType type) {
		String dashed = DataObjectPropertyName.toDashedForm(propertyName);
		Node described = describe(type);
		node.children.put(dashed.replace("-", ""), described.named(dashed));
	}

	private Node describe(ResolvableType type) {
		Class<?> resolved = type.resolve(Object.class);
		if (Map.class.isAssignableFrom(resolved)) {
			return new Node(Kind.MAP, null, describe(type.asMap().getGeneric(1)));
		}
		if (Collection.class.isAssignableFrom(resolved)) {
			return new Node(Kind.LIST, null, describe(type.asCollection().getGeneric(0)));
		}
		if (resolved.isArray()) {
			return new Node(Kind.LIST, null, describe(type.getComponentType()));
		}
		if (resolved == Object.class) {
			return new Node(Kind.ANY, null);
		}
		if (isObject(resolved)) {
			return new Node(Kind.OBJECT, null, object(resolved));
		}
		return new Node(Kind.VALUE, null);
	}

	private static boolean isObject(Class<?> type) {
		if (type.isPrimitive() || type.isEnum() || type.isInterface() || Modifier.isAbstract(type.getModifiers())
				|| ClassUtils.isPrimitiveWrapper(type) || type == String.class) {
			return false;
		}
		String name = type.getName();
		return !(name.startsWith("java.") || name.startsWith("javax.") || name.startsWith("jakarta.")
				|| name.startsWith("org.springframework.") || name.startsWith("kotlin."));
	}

	private void readMetadata(@Nullable ClassLoader classLoader) {
		ClassLoader loader = (classLoader != null) ? classLoader : ClassUtils.getDefaultClassLoader();
		if (loader == null) {
			return;
		}
		try {
			Enumeration<URL> files = loader.getResources(METADATA);
			while (files.hasMoreElements()) {
				readMetadata(files.nextElement(), loader);
			}
		}
		catch (IOException ex) {
			// The metadata only adds names; the property classes are enough.
		}
	}

	private void readMetadata(URL file, ClassLoader loader) throws IOException {
		String json;
		try (InputStream in = file.openStream()) {
			json = StreamUtils.copyToString(in, StandardCharsets.UTF_8);
		}
		Map<String, Object> metadata = JsonParserFactory.getJsonParser().parseMap(json);
		for (Map<?, ?> group : entries(metadata.get("groups"))) {
			if (group.get("name") instanceof String name && isUnderRoot(name)
					&& group.get("type") instanceof String type && ClassUtils.isPresent(type, loader)
					&& check(ConfigurationPropertyName.of(name)) != null) {
				mount(name, ClassUtils.resolveClassName(type, loader));
			}
		}
		for (Map<?, ?> property : entries(metadata.get("properties"))) {
			if (property.get("name") instanceof String name && ConfigurationPropertyName.isValid(name)
					&& isUnderRoot(name) && check(ConfigurationPropertyName.of(name)) != null) {
				ConfigurationPropertyName propertyName = ConfigurationPropertyName.of(name);
				Node parent = path(propertyName.getParent());
				String last = propertyName.getLastElement(Form.DASHED);
				parent.children.putIfAbsent(last.replace("-", ""), new Node(Kind.ANY, last));
			}
		}
	}

	static boolean isUnder(ConfigurationPropertyName name) {
		return ROOT.equals(name) || ROOT.isAncestorOf(name);
	}

	private static List<Map<?, ?>> entries(@Nullable Object list) {
		List<Map<?, ?>> entries = new ArrayList<>();
		if (list instanceof List<?> items) {
			for (Object item : items) {
				if (item instanceof Map<?, ?> entry) {
					entries.add(entry);
				}
			}
		}
		return entries;
	}

	private static boolean isUnderRoot(String name) {
		return ConfigurationPropertyName.isValid(name) && isUnder(ConfigurationPropertyName.of(name));
	}

	/**
	 * A name nothing binds.
	 *
	 * @param name the name as set, without trailing list indexes
	 * @param known the longest part of it that is known
	 * @param suggestion the closest known name, if one is close
	 * @param knownHere the names known right under {@code known}
	 * @param list whether {@code known} is a list, whose entries are indexes
	 */
	record Unknown(ConfigurationPropertyName name, ConfigurationPropertyName known, @Nullable String suggestion,
			List<String> knownHere, boolean list) {

		/**
		 * Says what to do: the closest name, or the names that exist where this one was written.
		 * @return e.g. {@code did you mean rate-limit.policies.api.burst?}
		 */
		String hint() {
			if (this.suggestion != null) {
				return "did you mean " + this.suggestion + "?";
			}
			if (this.list) {
				return this.known + " is a list: its entries are " + this.known + "[0], " + this.known + "[1], ...";
			}
			if (this.knownHere.isEmpty()) {
				return this.known + " takes a value, not nested properties";
			}
			return "known under " + this.known + ": " + String.join(", ", this.knownHere.stream().sorted().toList());
		}

	}

	private enum Kind {

		/** An object with named properties. */
		OBJECT,

		/** A map: any key, then its value. */
		MAP,

		/** A list or array: an index, then its element. */
		LIST,

		/** A value: nothing below it. */
		VALUE,

		/** Known from the metadata alone, or typed Object: anything below it. */
		ANY

	}

	/** A node of the tree of known names; object nodes share children by class (cycles allowed). */
	private static final class Node {

		final Kind kind;

		final @Nullable String name;

		final Map<String, Node> children;

		final Node element;

		Node(Kind kind, @Nullable String name) {
			this.kind = kind;
			this.name = name;
			this.children = new LinkedHashMap<>();
			this.element = this;
		}

		Node(Kind kind, @Nullable String name, Node element) {
			this.kind = kind;
			this.name = name;
			this.children = (kind == Kind.OBJECT) ? element.children : new LinkedHashMap<>();
			this.element = (kind == Kind.OBJECT) ? this : element;
		}

		Node named(String name) {
			return new Node(this.kind, name, (this.kind == Kind.OBJECT) ? this : this.element);
		}

	}

}
