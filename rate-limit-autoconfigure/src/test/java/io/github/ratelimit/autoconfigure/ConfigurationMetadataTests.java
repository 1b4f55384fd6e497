package io.github.ratelimit.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;

import org.springframework.boot.json.JsonParserFactory;
import org.springframework.util.StreamUtils;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The configuration metadata that IDEs read is in the module's output on every JDK (the processor is
 * named explicitly, as javac 23+ runs no processor found on the class path), and every
 * {@code rate-limit.*} property in it has a description.
 */
class ConfigurationMetadataTests {

	@Test
	void theMetadataIsBuiltAndEveryPropertyHasADescription() throws IOException {
		Map<String, Object> metadata = metadata();
		List<Map<String, Object>> properties = entries(metadata, "properties");
		Set<String> names = properties.stream().map((p) -> (String) p.get("name")).collect(Collectors.toSet());
		assertThat(names).contains("rate-limit.enabled", "rate-limit.mode", "rate-limit.store.type",
				"rate-limit.policies", "rate-limit.rules", "rate-limit.client-ip.trusted-proxies",
				"rate-limit.client.retry.enabled");
		for (Map<String, Object> property : properties) {
			if (((String) property.get("name")).startsWith("rate-limit.")) {
				assertThat((String) property.get("description")).as("description of %s", property.get("name"))
					.isNotBlank();
			}
		}
	}

	@Test
	void enumerableValuesAreEnums() throws Exception {
		Map<String, String> types = entries(metadata(), "properties").stream()
			.collect(Collectors.toMap((p) -> (String) p.get("name"), (p) -> (String) p.get("type")));
		assertThat(types).containsEntry("rate-limit.mode", RateLimitProperties.Mode.class.getName())
			.containsEntry("rate-limit.store.type", RateLimitProperties.StoreType.class.getName());
		// A policy's fields have no entries of their own (they sit in a map); IDEs read their types.
		for (String getter : List.of("algorithm", "onLimit", "count")) {
			assertThat(RateLimitProperties.Policy.class.getMethod(getter).getReturnType().isEnum()).as(getter).isTrue();
		}
	}

	@Test
	void everyHintIsForAPropertyThatExists() throws IOException {
		Map<String, Object> metadata = metadata();
		Set<String> names = entries(metadata, "properties").stream()
			.map((p) -> (String) p.get("name"))
			.collect(Collectors.toSet());
		List<Map<String, Object>> hints = entries(metadata, "hints");
		assertThat(hints).isNotEmpty();
		for (Map<String, Object> hint : hints) {
			assertThat(names).contains((String) hint.get("name"));
		}
	}

	@Test
	void everyPropertyInTheMetadataIsAKnownName() throws IOException {
		var roots = UnknownPropertiesCheck.roots(getClass().getClassLoader());
		for (Map<String, Object> property : entries(metadata(), "properties")) {
			String name = (String) property.get("name");
			if (name.startsWith("rate-limit.")) {
				assertThat(UnknownPropertiesCheck.isKnown(roots,
						org.springframework.boot.context.properties.source.ConfigurationPropertyName.of(name)))
					.as(name)
					.isTrue();
			}
		}
	}

	/** This module's metadata, from the directory or jar that holds its classes. */
	static Map<String, Object> metadata() throws IOException {
		URL classes = RateLimitProperties.class.getProtectionDomain().getCodeSource().getLocation();
		URL file = new URL(classes.toString().endsWith(".jar") ? "jar:" + classes + "!/" : classes.toString());
		URL metadata = new URL(file, "META-INF/spring-configuration-metadata.json");
		try (InputStream in = metadata.openStream()) {
			return JsonParserFactory.getJsonParser().parseMap(StreamUtils.copyToString(in, StandardCharsets.UTF_8));
		}
	}

	@SuppressWarnings("unchecked")
	static List<Map<String, Object>> entries(Map<String, Object> metadata, String key) {
		return (List<Map<String, Object>>) metadata.getOrDefault(key, List.of());
	}

}
