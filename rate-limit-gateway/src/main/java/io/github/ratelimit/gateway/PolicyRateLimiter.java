package io.github.ratelimit.gateway;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.cloud.gateway.event.FilterArgsEvent;
import org.springframework.cloud.gateway.filter.ratelimit.AbstractRateLimiter;
import org.springframework.cloud.gateway.support.ConfigurationService;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.RateLimitConfigurationException;
import io.github.ratelimit.core.RateLimitStore;
import io.github.ratelimit.core.Receipt;
import io.github.ratelimit.web.CountMode;
import io.github.ratelimit.web.DecisionOutcome;
import io.github.ratelimit.web.DecisionRecorder;
import io.github.ratelimit.web.limiter.Check;
import io.github.ratelimit.web.limiter.RateLimitHeaders;
import io.github.ratelimit.web.limiter.RequestDecision;
import io.github.ratelimit.web.limiter.RequestLimiter;
import io.github.ratelimit.web.limiter.ResponseHeaders;
import io.github.ratelimit.web.policy.RateLimitPolicies;
import io.github.ratelimit.web.policy.RateLimitPolicy;
import io.github.ratelimit.web.reactive.StoreCalls;

/**
 * A {@code RateLimiter} that Spring Cloud Gateway's {@code RequestRateLimiter} filter accepts
 * ({@code rate-limiter: "#{@rateLimitedRateLimiter}"}), for routes that keep their own {@code KeyResolver}: the
 * route chooses a policy of {@code rate-limit.policies} with the argument {@code rate-limited.policy}, the key
 * resolver's answer replaces the policy's {@code key}, and the policy's algorithm, store (Redis included, with its
 * failure modes), bans and headers decide. What the {@code RateLimiter} API cannot carry is refused when a route
 * first asks: {@code count: failures} or {@code successes} (it never sees the response), delay mode and
 * {@code slow-down} (it cannot wait), concurrency limits (it is never told when a request ends); plans and
 * exemptions need the request, which it is not given. Thread-safe.
 */
final class PolicyRateLimiter extends AbstractRateLimiter<PolicyRateLimiter.Config> {

	private static final Log logger = LogFactory.getLog(PolicyRateLimiter.class);

	/** The argument prefix of a route's {@code RequestRateLimiter} filter that this limiter reads. */
	static final String CONFIGURATION_PROPERTY_NAME = "rate-limited";

	/** What decides; {@code null} with {@code rate-limit.enabled=false}: every request is allowed. */
	private final @Nullable Limiting limiting;

	PolicyRateLimiter(@Nullable Limiting limiting, @Nullable ConfigurationService configurationService) {
		super(Config.class, CONFIGURATION_PROPERTY_NAME, configurationService);
		this.limiting = limiting;
	}

	/** A route's arguments, as it is defined: a policy it cannot use fails it then, not its requests. */
	@Override
	public void onApplicationEvent(FilterArgsEvent event) {
		super.onApplicationEvent(event);
		if (this.limiting != null && getConfig().containsKey(event.getRouteId())) {
			this.limiting.policyOf(event.getRouteId(), getConfig().get(event.getRouteId()));
		}
	}

	@Override
	public Mono<Response> isAllowed(String routeId, String id) {
		Limiting limiting = this.limiting;
		if (limiting == null) {
			return Mono.just(new Response(true, Map.of()));
		}
		RateLimitPolicy policy;
		try {
			policy = limiting.policyOf(routeId, getConfig().get(routeId));
		}
		catch (RateLimitConfigurationException ex) {
			return Mono.error(ex);
		}
		RateLimitPolicy judged = limiting.shadowOnly() ? policy.inShadow() : policy;
		Acquisition acquisition = new Acquisition(judged.id(), judged.limit(), "key:" + id, judged.cost(), 0,
				judged.shadow() ? null : judged.ban());
		Mono<List<Receipt>> admitted = Mono.defer(() -> {
			long start = System.nanoTime();
			return Mono.fromCompletionStage(limiting.store().admitAllAsync(List.of(acquisition)))
				.doFinally((signal) -> limiting.recorder().storeCall(System.nanoTime() - start));
		});
		// As the WebFlux filter calls the store: a store whose admissions may block is asked off the event loop.
		if (limiting.storeCalls() == StoreCalls.BLOCKING) {
			admitted = admitted.subscribeOn(Schedulers.boundedElastic());
		}
		return admitted.map((receipts) -> limiting.answer(judged, acquisition, receipts.get(0)))
			.onErrorResume((ex) -> {
				// As a store step that fails: the request goes on, and the failure is counted.
				logger.warn("Rate limit store failed for route " + routeId + "; the request goes on", ex);
				limiting.recorder().decided(judged.name(), DecisionOutcome.STORE_ERROR);
				return Mono.just(new Response(true, Map.of()));
			});
	}

	/**
	 * What decides a route's requests.
	 * @param policies the starter's policies
	 * @param store the store
	 * @param headers renders the headers
	 * @param recorder records outcomes
	 * @param limiter records and logs what a policy decided, as for a request the starter's filter decides
	 * @param shadowOnly {@code rate-limit.mode: shadow}: every policy only observes
	 * @param storeCalls how the store is called without blocking an event loop
	 */
	record Limiting(RateLimitPolicies policies, RateLimitStore store, RateLimitHeaders headers,
			DecisionRecorder recorder, RequestLimiter limiter, boolean shadowOnly, StoreCalls storeCalls) {

		private Response answer(RateLimitPolicy policy, Acquisition acquisition, Receipt receipt) {
			boolean allowed = receipt.decision().isAllowed() || policy.shadow();
			Check check = new Check(policy, acquisition, receipt, receipt.decision(), allowed);
			// The outcomes, and the rejection log's lines, of a request the starter's filter decides.
			this.limiter.record(check);
			Map<String, String> written = new LinkedHashMap<>();
			if (!policy.shadow()) {
				this.headers.write(new RequestDecision(List.of(check)), new ResponseHeaders() {

					@Override
					public void set(String name, String value) {
						written.put(name, value);
					}

					@Override
					public void remove(String name) {
						written.remove(name);
					}

				});
			}
			return new Response(allowed, written);
		}

		/** The route's policy, checked for what a {@code RateLimiter} can do. */
		private RateLimitPolicy policyOf(String routeId, @Nullable Config config) {
			String name = (config != null) ? config.getPolicy() : null;
			String origin = "route " + routeId + ": RequestRateLimiter " + CONFIGURATION_PROPERTY_NAME + ".policy";
			if (name == null) {
				throw new RateLimitConfigurationException(origin, "names no policy",
						"Add the argument " + CONFIGURATION_PROPERTY_NAME + ".policy: <a policy of rate-limit.policies>");
			}
			RateLimitPolicy policy = this.policies.get(name);
			if (policy == null) {
				throw new RateLimitConfigurationException(origin, "no policy named '" + name + "'",
						"Define it under rate-limit.policies." + name);
			}
			if (policy.count() != CountMode.ALL || policy.maxDelayNanos() > 0 || policy.slowsDown()
					|| policy.isConcurrency()) {
				throw new RateLimitConfigurationException(origin, "policy '" + name
						+ "' counts responses, waits or limits concurrency, which a RateLimiter cannot do",
						"Name it with the RateLimited filter instead (filters: [RateLimited=" + name + "])");
			}
			return policy;
		}

	}

	/** A route's choice: the policy its requests spend. */
	public static class Config {

		private @Nullable String policy;

		/**
		 * Returns the policy the route's requests spend.
		 * @return a policy of {@code rate-limit.policies}
		 */
		public @Nullable String getPolicy() {
			return this.policy;
		}

		/**
		 * Sets the policy the route's requests spend.
		 * @param policy a policy of {@code rate-limit.policies}
		 */
		public void setPolicy(@Nullable String policy) {
			this.policy = policy;
		}

	}

}
