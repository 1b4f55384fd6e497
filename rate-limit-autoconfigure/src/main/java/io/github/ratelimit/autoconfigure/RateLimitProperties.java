package io.github.ratelimit.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.NestedConfigurationProperty;
import org.springframework.boot.context.properties.bind.DefaultValue;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.CaffeineRateLimitStore;
import io.github.ratelimit.core.OnFailure;
import io.github.ratelimit.core.RateLimitClock;
import io.github.ratelimit.core.RateLimitConfigurationException;
import io.github.ratelimit.web.CountMode;
import io.github.ratelimit.web.HeaderStyle;
import io.github.ratelimit.web.OnLimit;
import io.github.ratelimit.web.policy.RateLimitPolicy;

/**
 * Configuration of the rate limiter, under {@code rate-limit.*}.
 */
@ConfigurationProperties("rate-limit")
public class RateLimitProperties {

	/**
	 * The default order of the rate limit filter: just after Spring Security's filter chain
	 * ({@code -100}), so that {@code user} keys see the authenticated principal.
	 */
	public static final int DEFAULT_FILTER_ORDER = -90;

	/**
	 * Whether rate limiting is on; false registers no filter and no limiter at all.
	 */
	private boolean enabled = true;

	/**
	 * Enforce limits, or only observe them: shadow decides, counts (metrics) and logs but never
	 * rejects, delays nor adds headers.
	 */
	private Mode mode = Mode.ENFORCE;

	/**
	 * Order of the rate limit filter in the servlet filter chain; the default runs it just after
	 * Spring Security's filter chain (-100), so that 'user' keys see the authenticated principal.
	 */
	private int filterOrder = DEFAULT_FILTER_ORDER;

	/**
	 * Response headers.
	 */
	private Headers headers = new Headers(new ArrayList<>(List.of(HeaderStyle.BOTH)));

	/**
	 * How the client IP is found.
	 */
	@NestedConfigurationProperty
	private ClientIpProperties clientIp = ClientIpProperties.DEFAULTS;

	/**
	 * Where limiter state is kept.
	 */
	private final Store store = new Store();

	/**
	 * Delay mode (policies with on-limit: delay), over the whole application.
	 */
	private final Delay delay = new Delay();

	/**
	 * Requests that no policy limits.
	 */
	private Exempt exempt = new Exempt(List.of(), null);

	/**
	 * Named policies; every endpoint that names a policy shares its budget.
	 */
	private Map<String, Policy> policies = new LinkedHashMap<>();

	/**
	 * Path rules: which policies apply to which requests.
	 */
	private List<Rule> rules = new ArrayList<>();

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public Mode getMode() {
		return this.mode;
	}

	public void setMode(Mode mode) {
		this.mode = mode;
	}

	public int getFilterOrder() {
		return this.filterOrder;
	}

	public void setFilterOrder(int filterOrder) {
		this.filterOrder = filterOrder;
	}

	public Headers getHeaders() {
		return this.headers;
	}

	public void setHeaders(Headers headers) {
		this.headers = headers;
	}

	public ClientIpProperties getClientIp() {
		return this.clientIp;
	}

	public void setClientIp(ClientIpProperties clientIp) {
		this.clientIp = clientIp;
	}

	public Store getStore() {
		return this.store;
	}

	public Delay getDelay() {
		return this.delay;
	}

	public Exempt getExempt() {
		return this.exempt;
	}

	public void setExempt(Exempt exempt) {
		this.exempt = exempt;
	}

	public Map<String, Policy> getPolicies() {
		return this.policies;
	}

	public void setPolicies(Map<String, Policy> policies) {
		this.policies = policies;
	}

	public List<Rule> getRules() {
		return this.rules;
	}

	public void setRules(List<Rule> rules) {
		this.rules = rules;
	}

	/**
	 * Response headers.
	 *
	 * @param style Which rate limit headers responses carry, one style or a list: both (legacy and ietf),
	 * legacy (X-RateLimit-*), ietf (RateLimit and RateLimit-Policy of draft 11), draft-6 (RateLimit-Limit,
	 * -Remaining, -Reset) or none. Retry-After is always sent on a 429.
	 */
	public record Headers(List<HeaderStyle> style) {
	}

	/**
	 * Where limiter state is kept.
	 */
	public static class Store {

		/**
		 * The store: caffeine (in-process, the default) or redis (shared between instances; needs the
		 * rate-limit-redis module).
		 */
		private StoreType type = StoreType.CAFFEINE;

		/**
		 * The in-process store.
		 */
		private final Caffeine caffeine = new Caffeine();

		public StoreType getType() {
			return this.type;
		}

		public void setType(StoreType type) {
			this.type = type;
		}

		public Caffeine getCaffeine() {
			return this.caffeine;
		}

		/**
		 * The in-process store.
		 */
		public static class Caffeine {

			/**
			 * Most keys tracked at once per policy (each policy has a table of its own); a full table
			 * evicts nothing that is still spent, and judges keys it cannot track by shared overflow
			 * budgets of the policy, so that floods of distinct keys bound memory without lifting a
			 * lockout. Also the bound of the Redis store's local fallback.
			 */
			// CaffeineRateLimitStore.DEFAULT_MAXIMUM_SIZE, written out: the metadata processor reads literals
			// only (RateLimitAutoConfigurationTests holds the two equal).
			private long maximumSize = 1_000_000;

			public long getMaximumSize() {
				return this.maximumSize;
			}

			public void setMaximumSize(long maximumSize) {
				this.maximumSize = maximumSize;
			}

			/**
			 * Creates the in-process store these values describe: the store of {@code store.type: caffeine},
			 * and the Redis store's local fallback.
			 * @param clock the time source
			 * @return the store
			 * @throws RateLimitConfigurationException naming {@code maximum-size} when the store refuses it
			 */
			public CaffeineRateLimitStore createStore(RateLimitClock clock) {
				try {
					return new CaffeineRateLimitStore(this.maximumSize, clock);
				}
				catch (IllegalArgumentException ex) {
					throw new RateLimitConfigurationException("rate-limit.store.caffeine.maximum-size", ex.getMessage(),
							"Set the most keys tracked at once per policy, e.g. 1000000");
				}
			}

		}

	}

	/**
	 * Delay mode, over the whole application.
	 */
	public static class Delay {

		/**
		 * Most requests waiting for their turn at once, over all policies and keys; beyond it a request
		 * that would wait gets its 429 at once and gives back the tokens it reserved.
		 */
		private int maxWaiting = 100;

		/**
		 * Whether a waiting request is parked with the Servlet async API instead of holding its thread. Unset,
		 * it is parked when every filter registered as a bean also sees async dispatches (else the start-up
		 * logs which filters keep requests on their threads); true fails the start-up naming such filters;
		 * false always waits on the thread.
		 */
		private @Nullable Boolean park;

		public int getMaxWaiting() {
			return this.maxWaiting;
		}

		public void setMaxWaiting(int maxWaiting) {
			this.maxWaiting = maxWaiting;
		}

		public @Nullable Boolean getPark() {
			return this.park;
		}

		public void setPark(@Nullable Boolean park) {
			this.park = park;
		}

	}

	/**
	 * Requests that no policy limits: they spend nothing, carry no rate limit header and are counted
	 * with outcome exempt.
	 *
	 * @param ips Client IPs or CIDR blocks (IPv4 and IPv6), matched against the resolved client IP, that are
	 * never limited, e.g. 10.0.0.0/8.
	 * @param when A SpEL boolean over the request (ip, user, request, header('Name'), param('name'),
	 * pathVariables) that exempts a request from every policy when true; an expression that fails exempts
	 * nobody.
	 */
	public record Exempt(@DefaultValue List<String> ips, @Nullable String when) {
	}

	/**
	 * Whether limits are enforced.
	 */
	public enum Mode {

		/**
		 * Requests over a limit are rejected (or delayed).
		 */
		ENFORCE,

		/**
		 * Decisions are made, counted and logged; responses are never changed.
		 */
		SHADOW

	}

	/**
	 * Store types.
	 */
	public enum StoreType {

		/**
		 * In-process, on Caffeine.
		 */
		CAFFEINE,

		/**
		 * Shared between instances, on Redis.
		 */
		REDIS

	}

	/**
	 * A named policy: a budget and how requests are keyed into it.
	 *
	 * @param algorithm Algorithm: token-bucket, fixed-window, sliding-window-log, sliding-window-counter,
	 * leaky-bucket, or concurrency (at most limit requests of a key in flight, no period).
	 * @param limit Requests (tokens) allowed per period; required, positive (with concurrency: requests in
	 * flight).
	 * @param period Period the limit refers to, e.g. 1s, 1m, 1h; required, positive (not with concurrency).
	 * @param burst Bucket capacity: the most requests allowed at once; defaults to the limit.
	 * @param key Whose budget a request spends: ip, user, header:Name, param:name, global, a SpEL template
	 * #{...} or @beanName.
	 * @param cost Tokens one request takes; at most the burst.
	 * @param onLimit What happens to a request over the limit: reject (429 at once) or delay (wait up to
	 * max-delay for its turn, then 429); delay needs token-bucket or leaky-bucket.
	 * @param maxDelay With on-limit delay: the longest a request may wait for its turn; a request whose turn
	 * is further away gets the 429 at once.
	 * @param count Which requests spend the budget: all, failures (response status 400 or above:
	 * brute-force protection) or successes; failures and successes count when the response is complete.
	 * @param shadow Whether this policy only observes: decided, counted and logged, never rejecting,
	 * delaying nor adding headers.
	 * @param plan Where a request's plan name comes from, in the syntax of keys: header:Name, param:name, a
	 * SpEL template #{...} or @beanName (a KeyResolver returning the plan name: the way to trust it); a
	 * request with no plan or an unknown one gets the policy's own limit.
	 * @param plans Plans by name, each overriding the policy's limit, period and burst (not its algorithm);
	 * the budget stays one per key, whatever plan a request names.
	 * @param exemptWhen A SpEL boolean over the request (as rate-limit.exempt.when) that exempts a request
	 * from this policy when true.
	 * @param onFailure What decides this policy's requests when the shared store (Redis) cannot answer in
	 * time: allow (fail open), deny (429) or local (this instance's in-process budget); the store's
	 * rate-limit.store.redis.on-failure when not set. No effect with the in-process store.
	 * @param slowDown Slowing requests down once part of a key's budget is spent, before it is locked out
	 * (brute-force protection): not with on-limit delay nor concurrency.
	 * @param ban Banning a key that keeps running into the limit: refused at once for a while, its budget not
	 * asked (not with concurrency).
	 */
	public record Policy(@DefaultValue("token-bucket") Algorithm algorithm, @Nullable Long limit,
			@Nullable Duration period, @Nullable Long burst, @DefaultValue("ip") String key,
			@DefaultValue("1") long cost, @DefaultValue("reject") OnLimit onLimit,
			@DefaultValue("0s") Duration maxDelay, @DefaultValue("all") CountMode count, boolean shadow,
			@Nullable String plan, @DefaultValue Map<String, RateLimitPolicy.Plan> plans,
			@Nullable String exemptWhen, @Nullable OnFailure onFailure, RateLimitPolicy.@Nullable SlowDown slowDown,
			RateLimitPolicy.@Nullable BanSettings ban) {
	}

	/**
	 * A path rule.
	 *
	 * @param path Spring PathPattern the request path (within the application) must match, e.g. /api/**.
	 * @param methods HTTP methods the rule applies to; all methods when empty.
	 * @param policies Names of the policies that apply; each must be defined under rate-limit.policies.
	 */
	public record Rule(@Nullable String path, @DefaultValue List<String> methods,
			@DefaultValue List<String> policies) {
	}
}
