package io.github.ratelimit.benchmarks.harness;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

/**
 * Load from wrk ({@code apt-get install wrk}): one wrk thread, {@value LoadGenerator#CONNECTIONS}
 * connections, latency percentiles from {@code --latency}.
 */
public final class WrkLoadGenerator implements LoadGenerator {

	private static final Pattern TOTAL = Pattern.compile("(\\d+) requests in ([\\d.]+)(us|ms|s|m)\\b");

	private static final Pattern NON_2XX = Pattern.compile("Non-2xx or 3xx responses: (\\d+)");

	private static final Pattern SOCKET_ERRORS = Pattern
		.compile("Socket errors: connect (\\d+), read (\\d+), write (\\d+), timeout (\\d+)");

	private final String version;

	private WrkLoadGenerator(String version) {
		this.version = version;
	}

	static @Nullable WrkLoadGenerator ifInstalled() {
		try {
			Process process = new ProcessBuilder("wrk", "--version").redirectErrorStream(true).start();
			String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
			process.waitFor(10, TimeUnit.SECONDS);
			Matcher version = Pattern.compile("wrk (\\S+)").matcher(output);
			return new WrkLoadGenerator(version.find() ? version.group(1) : "?");
		}
		catch (IOException | InterruptedException ex) {
			return null;
		}
	}

	@Override
	public String name() {
		return "wrk " + this.version + " (1 thread, " + CONNECTIONS + " connections)";
	}

	@Override
	public LoadResult run(URI uri, Duration duration) throws IOException, InterruptedException {
		List<String> command = List.of("wrk", "-t1", "-c" + CONNECTIONS, "-d" + duration.toSeconds() + "s", "--latency",
				uri.toString());
		Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
		String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		if (!process.waitFor(duration.toSeconds() + 30, TimeUnit.SECONDS) || process.exitValue() != 0) {
			process.destroyForcibly();
			throw new IllegalStateException("wrk failed:\n" + output);
		}
		return parse(output);
	}

	public static LoadResult parse(String output) {
		Matcher total = TOTAL.matcher(output);
		if (!total.find()) {
			throw new IllegalStateException("Cannot read wrk's output:\n" + output);
		}
		long requests = Long.parseLong(total.group(1));
		double seconds = millis(total.group(2), total.group(3)) / 1000;
		long failures = 0;
		Matcher non2xx = NON_2XX.matcher(output);
		if (non2xx.find()) {
			failures += Long.parseLong(non2xx.group(1));
		}
		Matcher errors = SOCKET_ERRORS.matcher(output);
		if (errors.find()) {
			for (int i = 1; i <= 4; i++) {
				failures += Long.parseLong(errors.group(i));
			}
		}
		return new LoadResult(requests, seconds, failures, percentile(output, "50"), percentile(output, "99"), output);
	}

	private static double percentile(String output, String percent) {
		Matcher matcher = Pattern.compile("\\n\\s*" + percent + "%\\s+([\\d.]+)(us|ms|s|m)\\b").matcher(output);
		if (!matcher.find()) {
			throw new IllegalStateException("wrk printed no " + percent + "th percentile:\n" + output);
		}
		return millis(matcher.group(1), matcher.group(2));
	}

	private static double millis(String value, String unit) {
		double number = Double.parseDouble(value);
		return switch (unit) {
			case "us" -> number / 1000;
			case "ms" -> number;
			case "s" -> number * 1000;
			case "m" -> number * 60_000;
			default -> throw new IllegalArgumentException(unit);
		};
	}
}
