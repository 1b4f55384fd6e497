package io.github.ratelimit.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.json.JsonParserFactory;
import org.springframework.util.StreamUtils;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every {@code rate-limit.*} property named in README.md and docs/*.md exists: it has an entry in the
 * configuration metadata of the starter's modules, or sits under one (a policy's fields under
 * {@code rate-limit.policies}, a rule's under {@code rate-limit.rules}) and is a field of its class.
 * Lives here because the sample's test class path holds every module's metadata.
 */
class DocumentedPropertiesTests {

	private static final Pattern PROPERTY = Pattern.compile("rate-limit\\.[a-z0-9.\\-\\[\\]<>*]*[a-z0-9\\]>*]");

	/** Names the docs show as wrong on purpose (typos the start-up rejects, what Kubernetes injects). */
	private static final Set<String> WRONG_ON_PURPOSE = Set.of("rate-limit.policies.api.brust",
			"rate-limit.storee.type", "rate-limit.service.host");

	@Test
	void everyDocumentedPropertyExists() throws IOException {
		Set<String> metadata = metadataNames();
		assertThat(metadata).contains("rate-limit.enabled", "rate-limit.store.redis.timeout",
				"rate-limit.client.retry.enabled");
		Map<ConfigurationPropertyName, Class<?>> known = UnknownPropertiesCheck.roots(getClass().getClassLoader());
		Map<String, Set<String>> documented = documentedNames();
		assertThat(documented).containsKeys("README.md", "configuration.md", "redis.md");
		List<String> missing = new ArrayList<>();
		documented.forEach((file, names) -> {
			for (String name : names) {
				if (!WRONG_ON_PURPOSE.contains(name) && !exists(name, known, metadata)) {
					missing.add(file + ": " + name);
				}
			}
		});
		assertThat(missing).as("properties the docs name that do not exist").isEmpty();
	}

	@Test
	void aMisspeltPropertyIsCaught() throws IOException {
		Map<ConfigurationPropertyName, Class<?>> known = UnknownPropertiesCheck.roots(getClass().getClassLoader());
		Set<String> metadata = metadataNames();
		assertThat(exists("rate-limit.policies.<name>.limit", known, metadata)).isTrue();
		assertThat(exists("rate-limit.rules[i].path", known, metadata)).isTrue();
		assertThat(exists("rate-limit.store.redis.*", known, metadata)).isTrue();
		assertThat(exists("rate-limit.policies.<name>.*", known, metadata)).isTrue();
		assertThat(exists("rate-limit.policies.<name>.limmit", known, metadata)).isFalse();
		assertThat(exists("rate-limit.store.redis.timeoutt", known, metadata)).isFalse();
		assertThat(exists("rate-limit.nothing.*", known, metadata)).isFalse();
		assertThat(WRONG_ON_PURPOSE).allMatch((name) -> !exists(name, known, metadata));
	}

	/** Whether the name, with placeholders filled in, is known and has or sits under a metadata entry. */
	private static boolean exists(String documented, Map<ConfigurationPropertyName, Class<?>> known,
			Set<String> metadata) {
		String name = documented.replaceAll("<[^>]*>", "example").replaceAll("\\[[^\\]]*\\]", "[0]");
		if (name.endsWith(".*")) {
			return exists(name.substring(0, name.length() - 2), known, metadata);
		}
		if (!ConfigurationPropertyName.isValid(name)
				|| !UnknownPropertiesCheck.isKnown(known, ConfigurationPropertyName.of(name))) {
			return false;
		}
		ConfigurationPropertyName property = ConfigurationPropertyName.of(name);
		return metadata.stream()
			.map(ConfigurationPropertyName::of)
			.anyMatch((entry) -> entry.equals(property) || entry.isAncestorOf(property)
					|| property.isAncestorOf(entry));
	}

	private static Map<String, Set<String>> documentedNames() throws IOException {
		Path root = Path.of("..").toAbsolutePath().normalize();
		List<Path> files = new ArrayList<>(List.of(root.resolve("README.md")));
		try (Stream<Path> docs = Files.list(root.resolve("docs"))) {
			docs.filter((file) -> file.toString().endsWith(".md")).sorted().forEach(files::add);
		}
		Map<String, Set<String>> names = new java.util.LinkedHashMap<>();
		for (Path file : files) {
			Matcher matcher = PROPERTY.matcher(Files.readString(file));
			Set<String> found = new TreeSet<>();
			while (matcher.find()) {
				found.add(matcher.group());
			}
			names.put(file.getFileName().toString(), found);
		}
		return names;
	}

	@SuppressWarnings("unchecked")
	private static Set<String> metadataNames() throws IOException {
		Set<String> names = new TreeSet<>();
		Enumeration<URL> files = DocumentedPropertiesTests.class.getClassLoader()
			.getResources("META-INF/spring-configuration-metadata.json");
		while (files.hasMoreElements()) {
			try (InputStream in = files.nextElement().openStream()) {
				Map<String, Object> metadata = JsonParserFactory.getJsonParser()
					.parseMap(StreamUtils.copyToString(in, StandardCharsets.UTF_8));
				for (Map<String, Object> property : (List<Map<String, Object>>) metadata.getOrDefault("properties",
						List.of())) {
					String name = (String) property.get("name");
					if (name.startsWith("rate-limit.")) {
						names.add(name);
					}
				}
			}
		}
		return names;
	}

}
