package io.github.ratelimit.sample;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import org.springframework.asm.ClassReader;
import org.springframework.asm.Opcodes;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The published modules' public types are exactly those docs/how-it-works.md lists under "Public API":
 * a type made public, on purpose or not, fails the build until the list says so. Reads the compiled
 * classes of rate-limit-core, rate-limit-redis, rate-limit-autoconfigure, rate-limit-gateway and rate-limit-test (the
 * reactor has built them before the sample's tests run) and reads the access flags of each top-level class file.
 */
class PublicApiTests {

	private static final List<String> PUBLISHED = List.of("rate-limit-core", "rate-limit-redis",
			"rate-limit-autoconfigure", "rate-limit-gateway", "rate-limit-test");

	/** A list item of the section: a package, then its types, each in backticks. */
	private static final Pattern ITEM = Pattern.compile("^- `(io\\.github\\.ratelimit[\\w.]*)`: (.*)$");

	/** The part of the section that lists internals public across the starter's packages. */
	private static final String INTERNAL = "\n### Internal, public across the starter's packages\n";

	private static final Pattern TYPE = Pattern.compile("`([A-Z]\\w*)`");

	@Test
	void thePublicTypesAreTheDocumentedOnes() throws Exception {
		Set<String> documented = documented();
		assertThat(documented).contains("io.github.ratelimit.web.RateLimited", "io.github.ratelimit.core.RateLimitStore");
		assertThat(publicTypes()).as("public top-level types of the published modules (docs/how-it-works.md, Public API)")
			.containsExactlyElementsOf(documented);
	}

	@Test
	void internalTypesArePublicOnlyInInternalPackages() throws Exception {
		Set<String> internal = documented(INTERNAL);
		assertThat(internal).contains("io.github.ratelimit.web.policy.RateLimitPolicy");
		Set<String> internalPackages = new TreeSet<>();
		internal.forEach((type) -> internalPackages.add(type.substring(0, type.lastIndexOf('.'))));
		Set<String> documented = documented();
		documented.removeAll(internal);
		assertThat(documented).as("API types (docs/how-it-works.md, Public API) outside the internal packages")
			.noneMatch((type) -> internalPackages.contains(type.substring(0, type.lastIndexOf('.'))));
	}

	@Test
	void theScanSeesPackagePrivateTypesAndLeavesThemOut() throws Exception {
		Set<String> all = topLevelTypes();
		assertThat(all).contains("io.github.ratelimit.web.servlet.RateLimitExchange", "io.github.ratelimit.core.TokenBucket",
				"io.github.ratelimit.redis.LuaScripts");
		assertThat(publicTypes()).doesNotContain("io.github.ratelimit.web.servlet.RateLimitExchange",
				"io.github.ratelimit.core.TokenBucket", "io.github.ratelimit.redis.LuaScripts");
	}

	/**
	 * The public ones of {@link #topLevelTypes}, read from their class files (loading them would need what they
	 * link to: the reactive stack's types need WebFlux, which this servlet application does not have).
	 */
	private static Set<String> publicTypes() throws Exception {
		Set<String> names = new TreeSet<>();
		for (String name : topLevelTypes()) {
			for (String module : PUBLISHED) {
				Path file = root().resolve(module).resolve("target/classes").resolve(name.replace('.', '/') + ".class");
				if (Files.isRegularFile(file)
						&& (new ClassReader(Files.readAllBytes(file)).getAccess() & Opcodes.ACC_PUBLIC) != 0) {
					names.add(name);
				}
			}
		}
		return names;
	}

	private static Set<String> topLevelTypes() throws IOException {
		Set<String> names = new TreeSet<>();
		for (String module : PUBLISHED) {
			Path classes = root().resolve(module).resolve("target/classes");
			assertThat(classes).as("compiled classes of " + module).isDirectory();
			try (Stream<Path> files = Files.walk(classes)) {
				files.map((file) -> classes.relativize(file).toString().replace('\\', '/'))
					.filter((file) -> file.endsWith(".class") && !file.contains("$")
							&& !file.endsWith("package-info.class"))
					.map((file) -> file.substring(0, file.length() - ".class".length()).replace('/', '.'))
					.forEach(names::add);
			}
		}
		return names;
	}

	/** Every public type the Public API section lists, internal ones included. */
	private static Set<String> documented() throws IOException {
		return documented("\n## Public API\n");
	}

	private static Set<String> documented(String heading) throws IOException {
		String doc = Files.readString(root().resolve("docs/how-it-works.md"), StandardCharsets.UTF_8);
		int start = doc.indexOf(heading);
		assertThat(start).as("docs/how-it-works.md has the section " + heading.strip()).isNotNegative();
		int end = doc.indexOf("\n## ", start + 1);
		String section = doc.substring(start, (end < 0) ? doc.length() : end);
		Set<String> names = new TreeSet<>();
		for (String line : section.split("\n")) {
			Matcher item = ITEM.matcher(line);
			if (item.matches()) {
				Matcher type = TYPE.matcher(item.group(2));
				while (type.find()) {
					names.add(item.group(1) + "." + type.group(1));
				}
			}
		}
		return names;
	}

	private static Path root() {
		return Path.of("..").toAbsolutePath().normalize();
	}
}
