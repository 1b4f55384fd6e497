package io.github.ratelimit.web.policy;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.json.JsonParserFactory;

import io.github.ratelimit.core.RateLimitConfigurationException;

/**
 * Reads the JSON body of a runtime change ({@code plans} is a JSON object written as a string, since
 * actuator reads bodies of scalar values only), naming the field of every value it cannot read, and
 * answers a bad change with a {@code 400} whose body says which field and why (actuator hides
 * exception messages). Stateless.
 */
public final class PolicyChanges {

	private static final Set<String> PLAN_FIELDS = Set.of("limit", "period", "burst");

	private PolicyChanges() {
	}

	public static RateLimitPolicy.Change read(String prefix, @Nullable Object limit, @Nullable Object period,
			@Nullable Object burst, @Nullable Object plans) {
		if (limit == null && period == null && burst == null && plans == null) {
			// {} or {"limit": null}; a field the change does not take (a misspelt "limt") is refused before
			// (ChangeFieldsCheck).
			throw new RateLimitConfigurationException(prefix, "the change sets none of limit, period, burst and plans",
					"Send a JSON body with one or more of them, e.g. {\"limit\": 200}; DELETE returns to the "
							+ "configured values");
		}
		Map<String, RateLimitPolicy.Plan> readPlans = null;
		if (plans instanceof String json) {
			// Actuator reads a body of scalars: the plans come as a JSON document in a string.
			try {
				plans = JsonParserFactory.getJsonParser().parseMap(json);
			}
			catch (RuntimeException ex) {
				throw new RateLimitConfigurationException(prefix + ".plans", "cannot read the plans '" + shown(json) + "'",
						"Write a JSON object of plans by name, e.g. \"{\\\"pro\\\": {\\\"limit\\\": 1000}}\"");
			}
		}
		if (plans != null) {
			if (!(plans instanceof Map<?, ?> byName)) {
				throw new RateLimitConfigurationException(prefix + ".plans", "plans is an object of plans by name",
						"Write e.g. \"plans\": {\"pro\": {\"limit\": 1000}}");
			}
			readPlans = new LinkedHashMap<>();
			for (Map.Entry<?, ?> entry : byName.entrySet()) {
				String planPrefix = prefix + ".plans." + shown(entry.getKey());
				if (!(entry.getValue() instanceof Map<?, ?> plan)) {
					throw new RateLimitConfigurationException(planPrefix, "a plan is an object of limit, period and burst",
							"Write e.g. \"plans\": {\"pro\": {\"limit\": 1000}}");
				}
				for (Object field : plan.keySet()) {
					if (!PLAN_FIELDS.contains(String.valueOf(field))) {
						throw new RateLimitConfigurationException(planPrefix + "." + shown(field),
								"a plan sets only limit, period and burst", "Remove '" + shown(field) + "'");
					}
				}
				readPlans.put(String.valueOf(entry.getKey()), new RateLimitPolicy.Plan(number(planPrefix + ".limit", plan.get("limit")),
						duration(planPrefix + ".period", plan.get("period")),
						number(planPrefix + ".burst", plan.get("burst"))));
			}
		}
		return new RateLimitPolicy.Change(number(prefix + ".limit", limit), duration(prefix + ".period", period),
				number(prefix + ".burst", burst), readPlans);
	}

	public static WebEndpointResponse<Object> badRequest(String policy, String prefix, RateLimitConfigurationException ex) {
		String origin = ex.getOrigin();
		String field = origin.startsWith(prefix + ".") ? origin.substring(prefix.length() + 1) : origin;
		return answer(WebEndpointResponse.STATUS_BAD_REQUEST, "policy", policy, "field", field, "property", origin,
				"message", ex.getProblem(), "action", ex.getAction());
	}

	/**
	 * An answer of the endpoint with a JSON object of texts.
	 * @param status the HTTP status
	 * @param namesAndValues each member's name followed by its value, in the order the object shows them
	 * @return the answer
	 */
	public static WebEndpointResponse<Object> answer(int status, String... namesAndValues) {
		Map<String, Object> body = new LinkedHashMap<>();
		for (int i = 0; i < namesAndValues.length; i += 2) {
			body.put(namesAndValues[i], namesAndValues[i + 1]);
		}
		return new WebEndpointResponse<>(body, status);
	}

	private static @Nullable Long number(String property, @Nullable Object value) {
		if (value == null) {
			return null;
		}
		if (value instanceof Integer || value instanceof Long) {
			return ((Number) value).longValue();
		}
		try {
			return Long.parseLong(String.valueOf(value).trim());
		}
		catch (NumberFormatException ex) {
			throw new RateLimitConfigurationException(property, "'" + shown(value) + "' is not a whole number",
					"Write a positive whole number");
		}
	}

	private static @Nullable Duration duration(String property, @Nullable Object value) {
		if (value == null) {
			return null;
		}
		String text = String.valueOf(value).trim();
		return ConfiguredLimits.duration(property, "duration", text, shown(value), shown(text));
	}

	/** A value as an answer shows it: at most 64 characters, so that a huge value is not sent back whole. */
	static String shown(Object value) {
		String text = String.valueOf(value);
		return (text.length() <= 64) ? text : text.substring(0, 64) + "... (" + text.length() + " characters)";
	}
}
