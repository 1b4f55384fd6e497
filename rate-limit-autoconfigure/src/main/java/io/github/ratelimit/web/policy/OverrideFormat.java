package io.github.ratelimit.web.policy;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.PropertyMapper;
import org.springframework.boot.json.JsonParserFactory;
import org.springframework.boot.json.JsonWriter;

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
		Map<String, Object> json = values(change.limit(), change.period(), change.burst());
		if (change.plans() != null) {
			Map<String, Object> plans = new LinkedHashMap<>();
			change.plans().forEach((name, plan) -> plans.put(name, values(plan.limit(), plan.period(), plan.burst())));
			json.put("plans", plans);
		}
		return JsonWriter.standard().writeToString(json);
	}

	/** The values set, in this order; unset ones left out, periods in ISO-8601. */
	private static Map<String, Object> values(@Nullable Long limit, @Nullable Duration period, @Nullable Long burst) {
		Map<String, Object> values = new LinkedHashMap<>();
		PropertyMapper map = PropertyMapper.get();
		map.from(limit).to((value) -> values.put("limit", value));
		map.from(period).as(Duration::toString).to((value) -> values.put("period", value));
		map.from(burst).to((value) -> values.put("burst", value));
		return values;
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
