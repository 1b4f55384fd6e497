package io.github.ratelimit.web.servlet;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.json.JsonParserFactory;
import io.github.ratelimit.core.RateLimitConfigurationException;

/**
 * How a runtime change of a policy is written where every instance reads it (the Redis store's hash):
 * a JSON object of the values it sets, e.g. {@code {"limit":4,"period":"PT1H","plans":{"pro":{"limit":100}}}}
 * (periods in ISO-8601, unset values left out). Reading names the property of a value it cannot read,
 * so a hand-edited override that is wrong is logged, not applied. Stateless.
 */
final class OverrideFormat {

	private OverrideFormat() {
	}

	static String write(RateLimitPolicy.Change change) {
		StringBuilder json = new StringBuilder("{");
		values(json, change.limit(), change.period(), change.burst());
		if (change.plans() != null) {
			json.append((json.length() > 1) ? "," : "").append("\"plans\":{");
			boolean first = true;
			for (Map.Entry<String, RateLimitPolicy.Plan> plan : change.plans().entrySet()) {
				json.append(first ? "" : ",").append(quoted(plan.getKey())).append(":{");
				values(json, plan.getValue().limit(), plan.getValue().period(), plan.getValue().burst());
				json.append('}');
				first = false;
			}
			json.append('}');
		}
		return json.append('}').toString();
	}

	private static void values(StringBuilder json, @Nullable Long limit, @Nullable Duration period,
			@Nullable Long burst) {
		int start = json.length();
		if (limit != null) {
			json.append("\"limit\":").append(limit);
		}
		if (period != null) {
			json.append((json.length() > start) ? "," : "").append("\"period\":").append(quoted(period.toString()));
		}
		if (burst != null) {
			json.append((json.length() > start) ? "," : "").append("\"burst\":").append(burst);
		}
	}

	private static String quoted(String value) {
		StringBuilder quoted = new StringBuilder("\"");
		for (int i = 0; i < value.length(); i++) {
			char c = value.charAt(i);
			if (c == '"' || c == '\\') {
				quoted.append('\\').append(c);
			}
			else if (c < 0x20) {
				quoted.append(String.format("\\u%04x", (int) c));
			}
			else {
				quoted.append(c);
			}
		}
		return quoted.append('"').toString();
	}

	/**
	 * Reads a change written by {@link #write}.
	 * @param json the stored value
	 * @param prefix the policy's property prefix, for messages
	 * @return the change
	 * @throws RateLimitConfigurationException naming the value that cannot be read
	 */
	static RateLimitPolicy.Change read(String json, String prefix) {
		Map<String, Object> values;
		try {
			values = JsonParserFactory.getJsonParser().parseMap(json);
		}
		catch (RuntimeException ex) {
			throw new RateLimitConfigurationException(prefix, "cannot read the stored override '" + json + "'",
					"Remove it, or write a JSON object of limit, period, burst and plans");
		}
		Map<String, RateLimitPolicy.Plan> plans = null;
		if (values.get("plans") instanceof Map<?, ?> byName) {
			plans = new LinkedHashMap<>();
			for (Map.Entry<?, ?> entry : byName.entrySet()) {
				String planPrefix = prefix + ".plans." + entry.getKey();
				if (!(entry.getValue() instanceof Map<?, ?> plan)) {
					throw new RateLimitConfigurationException(planPrefix, "a stored plan is not an object",
							"Write it as {\"limit\": 100}");
				}
				plans.put(String.valueOf(entry.getKey()), new RateLimitPolicy.Plan(number(planPrefix + ".limit", plan.get("limit")),
						duration(planPrefix + ".period", plan.get("period")), number(planPrefix + ".burst", plan.get("burst"))));
			}
		}
		else if (values.get("plans") != null) {
			throw new RateLimitConfigurationException(prefix + ".plans", "stored plans are not an object",
					"Write them as {\"pro\": {\"limit\": 100}}");
		}
		return new RateLimitPolicy.Change(number(prefix + ".limit", values.get("limit")),
				duration(prefix + ".period", values.get("period")), number(prefix + ".burst", values.get("burst")), plans);
	}

	private static @Nullable Long number(String property, @Nullable Object value) {
		if (value == null) {
			return null;
		}
		if (value instanceof Number number && number.doubleValue() == number.longValue()) {
			return number.longValue();
		}
		throw new RateLimitConfigurationException(property, "the stored '" + value + "' is not a whole number",
				"Write a positive whole number");
	}

	private static @Nullable Duration duration(String property, @Nullable Object value) {
		if (value == null) {
			return null;
		}
		try {
			return Duration.parse(String.valueOf(value));
		}
		catch (DateTimeParseException ex) {
			throw new RateLimitConfigurationException(property, "the stored '" + value + "' is not an ISO-8601 duration",
					"Write it as e.g. PT1M");
		}
	}
}
