package io.github.ratelimit.web.policy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.bind.AbstractBindHandler;
import org.springframework.boot.context.properties.bind.BindContext;
import org.springframework.boot.context.properties.bind.BindHandler;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName.Form;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.core.env.Environment;
import org.springframework.util.StringUtils;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;
import org.springframework.web.util.pattern.PatternParseException;

import io.github.ratelimit.autoconfigure.ClientIpProperties;
import io.github.ratelimit.autoconfigure.RateLimitProperties;
import io.github.ratelimit.core.RateLimitConfigurationException;
import io.github.ratelimit.web.ClientIpSource;
import io.github.ratelimit.web.HeaderStyle;
import io.github.ratelimit.web.clientip.ClientIpResolver;
import io.github.ratelimit.web.clientip.IpAddressRange;
import io.github.ratelimit.web.key.KeyResolvers;

/**
 * Turns {@link RateLimitProperties} into validated policies, rules and trusted proxies; every bad
 * value fails with a {@link RateLimitConfigurationException} naming its property.
 */
public final class ConfiguredLimits {

	private static final String PREFIX = "rate-limit";

	private static final Log logger = LogFactory.getLog(ConfiguredLimits.class);

	private ConfiguredLimits() {
	}

	public static ClientIpResolver clientIpResolver(RateLimitProperties properties) {
		ClientIpProperties clientIp = properties.getClientIp();
		String prefix = PREFIX + ".client-ip.";
		List<IpAddressRange> ranges = ranges(clientIp.trustedProxies(), prefix + "trusted-proxies", "every client is "
				+ "then a trusted proxy, writes the address it is keyed by in the forwarding header, and gets a budget "
				+ "per address it writes. List only your proxies' addresses");
		ClientIpResolver.Builder builder = ClientIpResolver.builder().trustedProxies(ranges);
		// The builder is the one home of what a header and a prefix may be; each refusal names its property.
		String header = (clientIp.header() != null) ? clientIp.header().trim() : "";
		configure(() -> builder.header(header), prefix + "header", "'" + clientIp.header()
				+ "' is not an HTTP header name",
				"Use X-Forwarded-For, Forwarded, or the header your proxy sets to the client's address, e.g. X-Real-IP");
		int ipv4Prefix = clientIp.ipv4Prefix();
		configure(() -> builder.ipv4Prefix(ipv4Prefix), prefix + "ipv4-prefix",
				"the IPv4 prefix must be between " + ClientIpResolver.MIN_IPV4_PREFIX + " and 32, was " + ipv4Prefix,
				"Set 32 to key each IPv4 address, or a shorter prefix such as 24 to key a network");
		int ipv6Prefix = clientIp.ipv6Prefix();
		configure(() -> builder.ipv6Prefix(ipv6Prefix), prefix + "ipv6-prefix",
				"the IPv6 prefix must be between " + ClientIpResolver.MIN_IPV6_PREFIX + " and 128, was " + ipv6Prefix,
				"Set 64 (the default: one subscriber's network), 56 or 48 for larger sites, or 128 to key each address");
		ClientIpSource source = clientIp.source();
		if (source == ClientIpSource.CONTAINER && !ranges.isEmpty()) {
			throw new RateLimitConfigurationException(prefix + "trusted-proxies",
					"trusted proxies have no effect with rate-limit.client-ip.source=container, which takes the address"
							+ " the container resolved",
					"Remove rate-limit.client-ip.trusted-proxies and configure the container's trust (e.g."
							+ " server.tomcat.remoteip.internal-proxies), or use rate-limit.client-ip.source=connection");
		}
		return builder.source(source).build();
	}

	private static void configure(Runnable setting, String property, String problem, String action) {
		try {
			setting.run();
		}
		catch (IllegalArgumentException ex) {
			throw new RateLimitConfigurationException(property, problem, action);
		}
	}

	/** Parses a list of addresses and CIDR blocks, warning of one that holds every address of its family. */
	private static List<IpAddressRange> ranges(List<String> values, String property, String everyAddress) {
		List<IpAddressRange> ranges = new ArrayList<>();
		for (int i = 0; i < values.size(); i++) {
			try {
				ranges.add(IpAddressRange.parse(values.get(i)));
			}
			catch (IllegalArgumentException ex) {
				throw new RateLimitConfigurationException(property + "[" + i + "]", ex.getMessage(),
						"Write an IPv4 or IPv6 address or CIDR block, e.g. 10.0.0.0/8 or fd00::/8");
			}
			if (ranges.get(i).prefixLength() == 0) {
				logger.warn(property + "[" + i + "] is '" + values.get(i) + "', every address of its family: " + everyAddress);
			}
		}
		return ranges;
	}

	/**
	 * The header styles, checked: {@code none} stands alone, and draft 6's {@code RateLimit-*} trio goes
	 * with draft 11's {@code RateLimit} list only when both are listed by name ({@code both} means
	 * legacy and ietf, and is no request for draft 6 beside it).
	 */
	public static Set<HeaderStyle> headerStyles(RateLimitProperties properties) {
		String property = PREFIX + ".headers.style";
		List<HeaderStyle> listed = properties.getHeaders().style();
		if (listed == null || listed.isEmpty() || listed.contains(null)) {
			throw new RateLimitConfigurationException(property, "no header style is set",
					"Set one or a list of: both, legacy, ietf, draft-6 (or none for no rate limit headers)");
		}
		Set<HeaderStyle> styles = new LinkedHashSet<>(listed);
		if (styles.contains(HeaderStyle.NONE) && styles.size() > 1) {
			throw new RateLimitConfigurationException(property, "none is listed with " + names(styles),
					"Set none alone, or remove it");
		}
		if (styles.contains(HeaderStyle.DRAFT_6) && styles.contains(HeaderStyle.BOTH)) {
			throw new RateLimitConfigurationException(property,
					"both (legacy and ietf) and draft-6 would send draft 11's RateLimit list and draft 6's "
							+ "RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset together, which clients that "
							+ "read one draft may take for the other",
					"Set [legacy, draft-6] for the fields most clients read; only if you want draft 11's and "
							+ "draft 6's fields side by side, list [legacy, ietf, draft-6]");
		}
		return styles;
	}

	private static String names(Set<HeaderStyle> styles) {
		return String.join(", ",
				styles.stream().map((style) -> style.name().toLowerCase(Locale.ROOT).replace('_', '-')).toList());
	}

	public static RateLimitPolicies policies(RateLimitProperties properties, KeyResolvers keyResolvers) {
		Map<String, RateLimitPolicy> policies = new LinkedHashMap<>();
		properties.getPolicies().forEach((name, policy) -> {
			String prefix = PREFIX + ".policies." + name;
			if (!StringUtils.hasText(name)) {
				throw new RateLimitConfigurationException(prefix, "a policy needs a name", "Name the policy");
			}
			PolicyDefinition definition = new PolicyDefinition(name, name, prefix, false, policy.algorithm(),
					policy.limit(), policy.period(), policy.burst(), policy.key(), policy.cost(), policy.onLimit(),
					policy.maxDelay(), policy.count(), policy.shadow());
			RateLimitPolicy defined = RateLimitPolicy.define(definition, keyResolvers);
			if (policy.plan() == null && !policy.plans().isEmpty()) {
				throw new RateLimitConfigurationException(prefix + ".plan", "plans are defined but no plan source is set",
						"Set where a request's plan name comes from, e.g. plan: \"@planOfApiKey\" (a KeyResolver bean) "
								+ "or plan: header:X-Plan");
			}
			if (policy.plan() != null) {
				defined = defined.withPlans(policy.plan(), policy.plans(), keyResolvers, prefix);
			}
			if (policy.exemptWhen() != null) {
				defined = defined.withExemption(policy.exemptWhen(), keyResolvers, prefix + ".exempt-when");
			}
			if (policy.slowDown() != null) {
				defined = defined.withSlowDown(policy.slowDown(), prefix + ".slow-down");
			}
			if (policy.ban() != null) {
				defined = defined.withBan(policy.ban(), prefix + ".ban");
			}
			policies.put(name, defined);
		});
		return new RateLimitPolicies(policies);
	}

	private static final Set<String> PLAN_PROPERTIES = Set.of("limit", "period", "burst");

	/**
	 * The checks of {@code rate-limit.policies} that Spring Boot's binding cannot make, made as it binds (the
	 * properties bean's binding, through a {@code ConfigurationPropertiesBindHandlerAdvisor}, and a refresh's):
	 * a period or max-delay written as a bare number (read as milliseconds, see {@link #lacksUnit}), judged as
	 * bound (the source that wins, placeholders resolved); properties of a plan that are not plan values
	 * (binding would drop them: a plan may set limit, period and burst only, so {@code plans.pro.algorithm}
	 * fails, naming it); and two policies of one source whose names differ only in case or dashes
	 * ({@code per-user} and {@code peruser}), which Spring Boot binds as one policy, each taking values of
	 * the other. (Across sources such names are one policy on purpose: an environment variable or a
	 * command-line argument overriding a value of {@code application.yml}.)
	 */
	public static final class PolicyPropertiesCheck extends AbstractBindHandler {

		private static final ConfigurationPropertyName POLICIES = ConfigurationPropertyName.of(PREFIX + ".policies");

		private final Environment environment;

		public PolicyPropertiesCheck(BindHandler parent, Environment environment) {
			super(parent);
			this.environment = environment;
		}

		@Override
		public <T> @Nullable Bindable<T> onStart(ConfigurationPropertyName name, Bindable<T> target, BindContext context) {
			if (POLICIES.equals(name)) {
				context.getSources().forEach(PolicyPropertiesCheck::checkNames);
			}
			return super.onStart(name, target, context);
		}

		@Override
		public @Nullable Object onSuccess(ConfigurationPropertyName name, Bindable<?> target, BindContext context,
				Object result) {
			ConfigurationProperty property = context.getConfigurationProperty();
			if (property != null && property.getName().equals(name) && isDuration(name)
					&& (property.getValue() instanceof String || property.getValue() instanceof Number)) {
				String text = this.environment.resolvePlaceholders(String.valueOf(property.getValue())).trim();
				if (lacksUnit(text)) {
					throw new RateLimitConfigurationException(name.toString(),
							"the duration '" + text + "' has no unit, which Spring Boot reads as milliseconds",
							"Write it with its unit, e.g. " + text + "s, or " + text + "ms if milliseconds are meant");
				}
			}
			return super.onSuccess(name, target, context, result);
		}

		/** A policy's period or max-delay, a plan's period, a slow-down's delay or max-delay, a ban's durations. */
		private static boolean isDuration(ConfigurationPropertyName name) {
			String last = name.getLastElement(Form.UNIFORM);
			int elements = name.getNumberOfElements();
			String group = (elements > 4) ? name.getElement(3, Form.UNIFORM) : "";
			return POLICIES.isAncestorOf(name) && switch (elements) {
				case 4 -> last.equals("period") || last.equals("maxdelay");
				case 5 -> (group.equals("slowdown") && (last.equals("delay") || last.equals("maxdelay")))
						|| (group.equals("ban") && (last.equals("within") || last.equals("duration")));
				case 6 -> group.equals("plans") && last.equals("period");
				default -> false;
			};
		}

		private static void checkNames(ConfigurationPropertySource source) {
			if (!(source instanceof IterableConfigurationPropertySource iterable)) {
				return;
			}
			Map<String, String> spellings = new LinkedHashMap<>();
			iterable.filter(POLICIES::isAncestorOf).stream().forEach((name) -> {
				if (name.getNumberOfElements() > 2) {
					String spelt = name.getElement(2, Form.ORIGINAL);
					String other = spellings.putIfAbsent(name.getElement(2, Form.UNIFORM), spelt);
					if (other != null && !other.equals(spelt)) {
						throw new RateLimitConfigurationException(PREFIX + ".policies." + spelt,
								"policies '" + other + "' and '" + spelt + "' are one policy to Spring Boot, which compares "
										+ "names without case and dashes, so each would take values of the other",
								"Rename one of them");
					}
				}
				if (name.getNumberOfElements() < 5 || !name.getElement(3, Form.UNIFORM).equals("plans")) {
					return;
				}
				String property = (name.getNumberOfElements() > 5) ? name.getElement(5, Form.DASHED) : "";
				if (name.getNumberOfElements() != 6 || !PLAN_PROPERTIES.contains(property)) {
					throw new RateLimitConfigurationException(name.toString(),
							"a plan sets only limit, period and burst; '" + name + "' is none of them",
							"Remove it, or fix its name (a plan keeps the policy's algorithm, key and cost)");
				}
			});
		}

	}

	/**
	 * Says whether a duration is written as a bare number, which Spring Boot reads as milliseconds: a
	 * {@code period: 60} meant as a minute would be a thousand times looser. Zero is the same in any unit, and
	 * a negative number is refused as a negative duration is.
	 * @param text the duration as written
	 * @return {@code true} for a number other than zero without a unit
	 */
	static boolean lacksUnit(String text) {
		String trimmed = text.trim();
		return trimmed.matches("\\+?\\d+") && !trimmed.matches("\\+?0+");
	}

	/**
	 * Reads a duration written in an annotation or a runtime change, refusing a bare number ({@link #lacksUnit}).
	 * @param property where it is written, for the failure
	 * @param what what the failure calls it: the attribute, or {@code duration}
	 * @param text the duration to read
	 * @param shown the duration as the failure shows it
	 * @param suggested the duration as the failure's action writes it with a unit
	 * @return the duration
	 * @throws RateLimitConfigurationException for a bare number or a text that is no duration
	 */
	static Duration duration(String property, String what, String text, String shown, String suggested) {
		if (lacksUnit(text)) {
			throw new RateLimitConfigurationException(property,
					"the " + what + " '" + shown + "' has no unit, which would be read as milliseconds",
					"Write it with its unit, e.g. " + suggested + "s, or " + suggested + "ms if milliseconds are meant");
		}
		try {
			return DurationStyle.detectAndParse(text);
		}
		catch (IllegalArgumentException ex) {
			throw new RateLimitConfigurationException(property, "cannot read the " + what + " '" + shown + "'",
					"Write a duration such as 10s, 1m, 1h or PT1M");
		}
	}

	public static RateLimitExemptions exemptions(RateLimitProperties properties, KeyResolvers keyResolvers) {
		List<IpAddressRange> ranges = ranges(properties.getExempt().ips(), PREFIX + ".exempt.ips",
				"no client of that family is limited by any policy");
		return RateLimitExemptions.of(ranges, properties.getExempt().when(), keyResolvers, PREFIX + ".exempt.when");
	}

	public static List<PathRule> rules(RateLimitProperties properties, RateLimitPolicies policies) {
		PathPatternParser parser = PathPatternParser.defaultInstance;
		List<PathRule> rules = new ArrayList<>();
		List<RateLimitProperties.Rule> configured = properties.getRules();
		for (int i = 0; i < configured.size(); i++) {
			RateLimitProperties.Rule rule = configured.get(i);
			String prefix = PREFIX + ".rules[" + i + "]";
			if (!StringUtils.hasText(rule.path())) {
				throw new RateLimitConfigurationException(prefix + ".path", "a rule needs a path",
						"Set a path pattern such as /api/**");
			}
			if (!rule.path().startsWith("/")) {
				// PathPattern matches the request's whole path, which starts with '/': such a rule would match nothing.
				throw new RateLimitConfigurationException(prefix + ".path",
						"the path pattern '" + rule.path() + "' does not start with '/', so it matches no request",
						"Write it from the root, e.g. /" + rule.path());
			}
			PathPattern pattern;
			try {
				pattern = parser.parse(rule.path());
			}
			catch (PatternParseException ex) {
				throw new RateLimitConfigurationException(prefix + ".path",
						"cannot parse the path pattern '" + rule.path() + "': " + ex.getMessage(),
						"Write a Spring PathPattern such as /api/** or /users/{id}");
			}
			Set<String> methods = new LinkedHashSet<>();
			for (String method : rule.methods()) {
				if (!StringUtils.hasText(method) || !method.trim().chars().allMatch(Character::isLetter)) {
					throw new RateLimitConfigurationException(prefix + ".methods",
							"'" + method + "' is not an HTTP method", "List methods such as GET, POST");
				}
				methods.add(method.trim().toUpperCase(Locale.ROOT));
			}
			if (rule.policies().isEmpty()) {
				throw new RateLimitConfigurationException(prefix + ".policies", "the rule names no policy",
						"Name one or more policies from rate-limit.policies");
			}
			List<RateLimitPolicy> applied = new ArrayList<>();
			for (String name : rule.policies()) {
				applied.add(policies.require(name, prefix + ".policies"));
			}
			rules.add(new PathRule(pattern, methods, applied));
		}
		return rules;
	}
}
