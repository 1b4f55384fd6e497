package io.github.ratelimit.web.policy;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Arrays;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.core.annotation.MergedAnnotation;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.core.annotation.MergedAnnotations.SearchStrategy;
import org.springframework.util.ClassUtils;
import org.springframework.util.StringUtils;
import org.springframework.web.method.HandlerMethod;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.RateLimitConfigurationException;
import io.github.ratelimit.web.CountMode;
import io.github.ratelimit.web.OnLimit;
import io.github.ratelimit.web.RateLimited;
import io.github.ratelimit.web.key.KeyResolvers;
import io.github.ratelimit.web.key.LimitedRequest;

/**
 * The policies of {@link RateLimited} handler methods, found once after start-up (where a bad
 * annotation fails the start) and looked up per request by the handler Spring MVC found for it (its
 * own lookup, so HTTP method, path variables, consumes and produces conditions all count; nothing is
 * looked up twice). Thread-safe once initialized.
 */
public final class AnnotatedEndpoints implements HandlerPolicies, SmartInitializingSingleton {

	private final Supplier<List<HandlerMethod>> handlerMethods;

	private final RateLimitPolicies policies;

	private final KeyResolvers keyResolvers;

	private volatile Map<Method, List<RateLimitPolicy>> byMethod = Collections.emptyMap();

	private volatile boolean countsLater;

	/**
	 * Creates the registry; it scans on {@link #afterSingletonsInstantiated()}.
	 * @param handlerMethods the handler methods of every handler mapping (Spring MVC's or WebFlux's)
	 * @param policies the named policies
	 * @param keyResolvers builds the keys of inline limits
	 */
	public AnnotatedEndpoints(Supplier<List<HandlerMethod>> handlerMethods, RateLimitPolicies policies,
			KeyResolvers keyResolvers) {
		this.handlerMethods = handlerMethods;
		this.policies = policies;
		this.keyResolvers = keyResolvers;
	}

	@Override
	public void afterSingletonsInstantiated() {
		Map<Method, List<RateLimitPolicy>> byMethod = new HashMap<>();
		for (HandlerMethod handlerMethod : this.handlerMethods.get()) {
			List<RateLimitPolicy> found = policiesOf(handlerMethod.getBeanType(), handlerMethod.getMethod());
			if (!found.isEmpty()) {
				byMethod.put(handlerMethod.getMethod(), found);
			}
		}
		this.countsLater = byMethod.values()
			.stream()
			.flatMap(List::stream)
			.anyMatch((policy) -> policy.count() != CountMode.ALL);
		this.byMethod = Map.copyOf(byMethod);
	}

	/**
	 * Returns the policies of a handler.
	 * @param request the request
	 * @param handler the handler Spring MVC dispatches a request to, or {@code null}
	 * @return the policies; empty when the handler is not an annotated handler method
	 */
	@Override
	public List<RateLimitPolicy> policiesFor(LimitedRequest request, @Nullable Object handler) {
		if (handler instanceof HandlerMethod handlerMethod) {
			return this.byMethod.getOrDefault(handlerMethod.getMethod(), List.of());
		}
		return List.of();
	}

	/**
	 * Returns whether any handler is annotated.
	 * @return {@code true} once some annotated handler has been found
	 */
	@Override
	public boolean any() {
		return !this.byMethod.isEmpty();
	}

	/**
	 * Returns whether some annotated policy counts only some responses.
	 * @return {@code true} when a request may be counted once its response is known
	 */
	@Override
	public boolean countsLater() {
		return this.countsLater;
	}

	/**
	 * Returns every annotated handler method with its policies.
	 * @return method descriptions mapped to policies
	 */
	public Map<String, List<RateLimitPolicy>> endpoints() {
		return this.byMethod.entrySet()
			.stream()
			.collect(Collectors.toMap((entry) -> describe(entry.getKey().getDeclaringClass(), entry.getKey()),
					Map.Entry::getValue, (a, b) -> a, LinkedHashMap::new));
	}

	private List<RateLimitPolicy> policiesOf(Class<?> beanType, Method method) {
		Class<?> userType = ClassUtils.getUserClass(beanType);
		String where = describe(userType, method);
		// The class's annotations first, then the method's.
		List<RateLimited> annotations = Stream.of(userType, method)
			.flatMap((element) -> MergedAnnotations.from(element, SearchStrategy.TYPE_HIERARCHY).stream(RateLimited.class))
			.map(MergedAnnotation::synthesize)
			.toList();
		List<RateLimitPolicy> result = new ArrayList<>();
		for (int i = 0; i < annotations.size(); i++) {
			RateLimitPolicy policy = policyOf(annotations.get(i), userType, method, where, i, annotations.size());
			boolean inline = !policy.id().equals(policy.name());
			// The RateLimit headers and the 429's body tell policies by name: two budgets of one name on a
			// response (an inline limit named as a configured policy a path rule may add, or twice on one
			// method) could not be told apart.
			if (inline && this.policies.get(policy.name()) != null) {
				throw new RateLimitConfigurationException("@RateLimited(name) on " + where,
						"the inline limit is named '" + policy.name() + "', as a policy of rate-limit.policies, but is a "
								+ "budget of its own: responses would name two budgets alike",
						"Name it otherwise, or use that policy: @RateLimited(\"" + policy.name() + "\")");
			}
			if (result.stream().anyMatch((existing) -> existing.name().equals(policy.name())
					&& !existing.id().equals(policy.id()))) {
				throw new RateLimitConfigurationException("@RateLimited(name) on " + where,
						"two limits of this method are named '" + policy.name() + "'",
						"Give each its own name");
			}
			if (result.stream().noneMatch((existing) -> existing.id().equals(policy.id()))) {
				result.add(policy);
			}
		}
		return List.copyOf(result);
	}

	private RateLimitPolicy policyOf(RateLimited annotation, Class<?> userType, Method method, String where, int index,
			int count) {
		boolean inline = annotation.limit() != 0 || StringUtils.hasText(annotation.period())
				|| annotation.burst() != 0 || StringUtils.hasText(annotation.key())
				|| annotation.algorithm() != Algorithm.TOKEN_BUCKET || StringUtils.hasText(annotation.name())
				|| annotation.onLimit() != OnLimit.REJECT || StringUtils.hasText(annotation.maxDelay())
				|| annotation.count() != CountMode.ALL || annotation.shadow();
		if (StringUtils.hasText(annotation.value())) {
			if (inline) {
				throw new RateLimitConfigurationException("@RateLimited(\"" + annotation.value() + "\") on " + where,
						"names a policy and also sets inline attributes (limit, period, burst, key, algorithm, name, onLimit, "
								+ "maxDelay, count, shadow)",
						"Either name a policy from rate-limit.policies, or define the limit inline; 'cost' may go with either");
			}
			RateLimitPolicy named = this.policies.get(annotation.value());
			if (named == null) {
				throw new RateLimitConfigurationException("@RateLimited(\"" + annotation.value() + "\") on " + where,
						"no policy named '" + annotation.value() + "'",
						"Define it under rate-limit.policies." + annotation.value() + " (defined: "
								+ String.join(", ", this.policies.names()) + ")");
			}
			return (annotation.cost() != 0) ? named.withCost(annotation.cost(), "@RateLimited(cost) on " + where)
					: named;
		}
		Duration period = StringUtils.hasText(annotation.period()) ? duration(annotation.period(), "period", where)
				: null;
		Duration maxDelay = StringUtils.hasText(annotation.maxDelay())
				? duration(annotation.maxDelay(), "maxDelay", where) : Duration.ZERO;
		String name = StringUtils.hasText(annotation.name()) ? annotation.name()
				: userType.getSimpleName() + "." + method.getName() + ((count > 1) ? "#" + (index + 1) : "");
		PolicyDefinition definition = new PolicyDefinition(where + "[" + index + "]", name, where,
				true, annotation.algorithm(),
				(annotation.limit() != 0) ? annotation.limit() : null, period,
				(annotation.burst() != 0) ? annotation.burst() : null,
				StringUtils.hasText(annotation.key()) ? annotation.key() : "ip",
				(annotation.cost() != 0) ? annotation.cost() : 1, annotation.onLimit(), maxDelay, annotation.count(),
				annotation.shadow());
		return RateLimitPolicy.define(definition, this.keyResolvers);
	}

	private static Duration duration(String text, String attribute, String where) {
		return ConfiguredLimits.duration("@RateLimited(" + attribute + ") on " + where, attribute, text, text,
				text.trim());
	}

	private static String describe(Class<?> type, Method method) {
		String parameters = Arrays.stream(method.getParameterTypes())
			.map(Class::getSimpleName)
			.collect(Collectors.joining(", "));
		return type.getName() + "#" + method.getName() + "(" + parameters + ")";
	}
}
