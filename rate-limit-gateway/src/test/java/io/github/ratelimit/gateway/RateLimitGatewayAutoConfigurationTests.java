package io.github.ratelimit.gateway;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.Test;
import reactor.core.scheduler.Schedulers;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.webflux.autoconfigure.WebFluxAutoConfiguration;
import org.springframework.cloud.gateway.filter.factory.GatewayFilterFactory;
import org.springframework.cloud.gateway.filter.ratelimit.RateLimiter;

import io.github.ratelimit.autoconfigure.RateLimitWebFluxAutoConfiguration;
import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.CaffeineRateLimitStore;
import io.github.ratelimit.core.Decision;
import io.github.ratelimit.core.RateLimitClock;
import io.github.ratelimit.core.RateLimitStore;
import io.github.ratelimit.web.DecisionRecorder;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The gateway's beans exist only in a reactive web application with Spring Cloud Gateway on the class path; with
 * the starter off its filter lets everything through; a route naming no policy, or an unknown one, fails as it is
 * defined; the {@code RateLimiter} asks a store that may block off the event loop.
 */
class RateLimitGatewayAutoConfigurationTests {

	private final ReactiveWebApplicationContextRunner reactive = new ReactiveWebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(WebFluxAutoConfiguration.class,
				RateLimitWebFluxAutoConfiguration.class, RateLimitGatewayAutoConfiguration.class,
				RateLimitGatewayRateLimiterAutoConfiguration.class));

	@Test
	void aReactiveGatewayGetsTheFilterNamedRateLimited() {
		this.reactive.run((context) -> {
			assertThat(context).hasSingleBean(RateLimitedGatewayFilterFactory.class);
			assertThat(context.getBean(RateLimitedGatewayFilterFactory.class).name()).isEqualTo("RateLimited");
			assertThat(context).hasSingleBean(GatewayRoutePolicies.class).hasSingleBean(FormBodyCache.class);
		});
	}

	@Test
	void noGatewayBeansWithoutTheGatewayOrTheStarter() {
		this.reactive.withClassLoader(new FilteredClassLoader(GatewayFilterFactory.class))
			.run((context) -> assertThat(context).doesNotHaveBean(GatewayRoutePolicies.class)
				.doesNotHaveBean(FormBodyCache.class));
		this.reactive.withPropertyValues("rate-limit.enabled=false").run((context) -> {
			// Routes that name policies still start, and let every request through.
			RateLimitedGatewayFilterFactory factory = context.getBean(RateLimitedGatewayFilterFactory.class);
			RateLimitedGatewayFilterFactory.Config config = factory.newConfig();
			config.setPolicies(java.util.List.of("api"));
			assertThat(factory.apply(config)).isNotInstanceOf(GatewayRoutePolicies.RouteFilter.class);
			assertThat(context).doesNotHaveBean(FormBodyCache.class);
			assertThat(context.getBean(PolicyRateLimiter.class).isAllowed("any", "key").block().isAllowed()).isTrue();
		});
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(RateLimitWebFluxAutoConfiguration.class,
					RateLimitGatewayAutoConfiguration.class))
			.run((context) -> assertThat(context).doesNotHaveBean(RateLimitedGatewayFilterFactory.class));
	}

	@Test
	void theRateLimiterAsksABlockingStoreOffTheEventLoopAndTimesEachCall() {
		ThreadRecordingStore store = new ThreadRecordingStore();
		List<Long> storeCalls = new CopyOnWriteArrayList<>();
		DecisionRecorder recorder = new DecisionRecorder() {

			@Override
			public void storeCall(long nanos) {
				storeCalls.add(nanos);
			}

		};
		this.reactive.withBean(RateLimitStore.class, () -> store)
			.withBean(DecisionRecorder.class, () -> recorder)
			.withPropertyValues("rate-limit.policies.api.limit=5", "rate-limit.policies.api.period=1m")
			.run((context) -> {
				PolicyRateLimiter limiter = context.getBean(PolicyRateLimiter.class);
				PolicyRateLimiter.Config config = new PolicyRateLimiter.Config();
				config.setPolicy("api");
				limiter.getConfig().put("route", config);
				// Asked on a thread that must not block, as an event loop's.
				RateLimiter.Response response = limiter.isAllowed("route", "alice")
					.subscribeOn(Schedulers.parallel())
					.block(Duration.ofSeconds(10));
				assertThat(response.isAllowed()).isTrue();
				assertThat(response.getHeaders()).containsEntry("X-RateLimit-Remaining", "4");
				assertThat(store.threads).singleElement().asString().startsWith("boundedElastic-");
				assertThat(storeCalls).hasSize(1);
			});
	}

	/** A store of the application's whose calls may block (it implements only the blocking ones); it records where it is called. */
	static final class ThreadRecordingStore implements RateLimitStore {

		final List<String> threads = new CopyOnWriteArrayList<>();

		private final CaffeineRateLimitStore delegate = new CaffeineRateLimitStore(100, RateLimitClock.SYSTEM);

		@Override
		public Decision tryAcquire(Acquisition acquisition) {
			this.threads.add(Thread.currentThread().getName());
			return this.delegate.tryAcquire(acquisition);
		}

		@Override
		public Decision release(Acquisition acquisition) {
			return this.delegate.release(acquisition);
		}

		@Override
		public Decision peek(Acquisition acquisition) {
			return this.delegate.peek(acquisition);
		}

		@Override
		public void reset(String limitId, String key) {
			this.delegate.reset(limitId, key);
		}

	}

	@Test
	void aRouteNamingAnUnknownPolicyFailsNamingThePoliciesThereAre() {
		this.reactive.withPropertyValues("rate-limit.policies.api.limit=5", "rate-limit.policies.api.period=1m").run((context) -> {
			RateLimitedGatewayFilterFactory factory = context.getBean(RateLimitedGatewayFilterFactory.class);
			RateLimitedGatewayFilterFactory.Config config = factory.newConfig();
			config.setPolicies(java.util.List.of("api", "apl"));
			org.assertj.core.api.Assertions.assertThatThrownBy(() -> factory.apply(config))
				.hasMessageContaining("RateLimited=api,apl")
				.hasMessageContaining("no policy named 'apl'")
				.hasMessageContaining("(defined: api)");
			config.setPolicies(java.util.List.of());
			org.assertj.core.api.Assertions.assertThatThrownBy(() -> factory.apply(config))
				.hasMessageContaining("names no policy");
		});
	}

}
