package io.github.ratelimit.web.limiter;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import org.springframework.mock.web.MockHttpServletRequest;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.CaffeineRateLimitStore;
import io.github.ratelimit.core.Decision;
import io.github.ratelimit.core.RateLimitStore;
import io.github.ratelimit.test.ManualClock;
import io.github.ratelimit.web.CountMode;
import io.github.ratelimit.web.DecisionOutcome;
import io.github.ratelimit.web.DecisionRecorder;
import io.github.ratelimit.web.OnLimit;
import io.github.ratelimit.web.clientip.ClientIpResolver;
import io.github.ratelimit.web.key.KeyResolvers;
import io.github.ratelimit.web.policy.PolicyDefinition;
import io.github.ratelimit.web.policy.RateLimitExemptions;
import io.github.ratelimit.web.policy.RateLimitPolicy;
import io.github.ratelimit.web.policy.TestPolicies;
import io.github.ratelimit.web.servlet.ServletRequestView;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The bound on requests waiting in delay mode ({@code rate-limit.delay.max-waiting}).
 */
class RequestLimiterTests {

	private final ManualClock clock = new ManualClock();

	private final KeyResolvers keyResolvers = new KeyResolvers(ClientIpResolver.builder().build(), null);

	private final CaffeineRateLimitStore store = new CaffeineRateLimitStore(1000, this.clock);

	/** One request a second, no burst, waits of up to an hour. */
	private final RateLimitPolicy queued = policy("queued", Algorithm.TOKEN_BUCKET, 1, Duration.ofSeconds(1), OnLimit.DELAY,
			Duration.ofHours(1), "global");

	private final RateLimitPolicy wide = policy("wide", Algorithm.TOKEN_BUCKET, 100, Duration.ofMinutes(1), OnLimit.REJECT,
			Duration.ZERO, "global");

	@Test
	void beyondMaxWaitingARequestIsRejectedAtOnceAndGivesBackWhatItTook() {
		RequestLimiter limiter = limiter(2);
		List<RateLimitPolicy> policies = List.of(this.wide, this.queued);
		assertThat(decide(limiter, policies).waitNanos()).isZero();
		assertThat(decide(limiter, policies).waitNanos()).isEqualTo(1_000_000_000L);
		assertThat(decide(limiter, policies).waitNanos()).isEqualTo(2_000_000_000L);
		RequestDecision refused = decide(limiter, policies);
		assertThat(refused.isAllowed()).isFalse();
		assertThat(refused.violatedPolicies()).containsExactly("queued");
		assertThat(refused.retryAfterSeconds()).as("the wait it would have had").isEqualTo(3);
		assertThat(refused.waitNanos()).isZero();
		assertThat(this.store.peek(acquisition(this.wide)).remaining()).as("wide gave its token back").isEqualTo(97);
		// One leaves the queue: the next request takes the turn the refused one gave back.
		limiter.doneWaiting();
		assertThat(decide(limiter, policies).waitNanos()).isEqualTo(3_000_000_000L);
		assertThat(decide(limiter, policies).isAllowed()).isFalse();
	}

	@Test
	void requestsThatNeedNoWaitAreNeverRefusedByAFullQueue() {
		RequestLimiter limiter = limiter(1);
		decide(limiter, List.of(this.queued));
		assertThat(decide(limiter, List.of(this.queued)).waitNanos()).isPositive();
		for (int i = 0; i < 50; i++) {
			assertThat(decide(limiter, List.of(this.wide)).isAllowed()).isTrue();
		}
	}

	@Test
	void sixtyFourThreadsAtOnceGetExactlyMaxWaitingPlaces() throws Exception {
		RequestLimiter limiter = limiter(10);
		RateLimitPolicy many = policy("many", Algorithm.TOKEN_BUCKET, 1, Duration.ofMillis(1), OnLimit.DELAY,
				Duration.ofHours(1), "global");
		decide(limiter, List.of(many));
		ExecutorService pool = Executors.newFixedThreadPool(64);
		CountDownLatch start = new CountDownLatch(1);
		try {
			List<Future<RequestDecision>> results = new ArrayList<>();
			for (int i = 0; i < 64; i++) {
				Callable<RequestDecision> call = () -> {
					start.await();
					return decide(limiter, List.of(many));
				};
				results.add(pool.submit(call));
			}
			start.countDown();
			int waiting = 0;
			int refused = 0;
			for (Future<RequestDecision> result : results) {
				RequestDecision decided = result.get(30, TimeUnit.SECONDS);
				if (decided.waitNanos() > 0) {
					waiting++;
				}
				else if (!decided.isAllowed()) {
					refused++;
				}
			}
			assertThat(waiting).isEqualTo(10);
			assertThat(refused).isEqualTo(54);
			// Refused requests gave their reservations back: only the ten waiting ones hold turns.
			assertThat(this.store.peek(acquisition(many)).resetNanos()).isEqualTo(11_000_000L);
		}
		finally {
			pool.shutdownNow();
		}
	}

	@Test
	void aSlowedRequestBeyondMaxWaitingIsRefusedAtOnceAndGivesBackItsUnit() {
		RequestLimiter limiter = limiter(1);
		RateLimitPolicy login = policy("login", Algorithm.TOKEN_BUCKET, 5, Duration.ofMinutes(15), OnLimit.REJECT,
				Duration.ZERO, "global");
		login = TestPolicies.slowingDown(login, new RateLimitPolicy.SlowDown(1L, Duration.ofSeconds(1), Duration.ofSeconds(8)));
		assertThat(decide(limiter, List.of(login)).waitNanos()).isZero();
		assertThat(decide(limiter, List.of(login)).waitNanos()).as("holds the one waiting place").isEqualTo(1_000_000_000L);
		RequestDecision refused = decide(limiter, List.of(login));
		assertThat(refused.isAllowed()).isFalse();
		assertThat(refused.retryAfterSeconds()).as("the wait it would have had").isEqualTo(2);
		assertThat(this.store.peek(acquisition(login)).remaining()).as("its unit given back").isEqualTo(3);
		limiter.doneWaiting();
		assertThat(decide(limiter, List.of(login)).waitNanos()).as("the same turn, once a place is free")
			.isEqualTo(2_000_000_000L);
	}

	@Test
	void inShadowModeASlowDownNeverMakesARequestWaitButIsCountedAsSlowed() {
		List<String> outcomes = new ArrayList<>();
		RequestLimiter limiter = new RequestLimiter(this.store, new DecisionRecorder() {

			@Override
			public void decided(String policy, DecisionOutcome outcome) {
				outcomes.add(outcome.tag());
			}

		}, new RejectionLog(this.clock, Duration.ofMinutes(1)), true, 1, RateLimitExemptions.NONE);
		RateLimitPolicy login = policy("login", Algorithm.TOKEN_BUCKET, 3, Duration.ofMinutes(15), OnLimit.REJECT,
				Duration.ZERO, "global");
		login = TestPolicies.slowingDown(login, new RateLimitPolicy.SlowDown(1L, Duration.ofSeconds(1), Duration.ofSeconds(8)));
		for (int i = 0; i < 4; i++) {
			RequestDecision decided = decide(limiter, List.of(login));
			assertThat(decided.isAllowed()).isTrue();
			assertThat(decided.waitNanos()).isZero();
		}
		assertThat(outcomes).containsExactly("allowed", "slowed", "slowed", "shadow-rejected");
	}

	@Test
	void aStoreThatFailsToTakeBackTheSlotsOfARequestThatWaitedLetsItGoOnWithoutThem() {
		RateLimitPolicy slots = policy("slots", Algorithm.CONCURRENCY, 1, null, OnLimit.REJECT, Duration.ZERO, "global");
		List<Check> held = decide(limiter(1), List.of(slots)).checks();
		assertThat(held.get(0).holdsSlot()).isTrue();
		RateLimitStore down = new RateLimitStore() {

			@Override
			public Decision tryAcquire(Acquisition acquisition) {
				throw new IllegalStateException("down");
			}

			@Override
			public Decision release(Acquisition acquisition) {
				throw new IllegalStateException("down");
			}

			@Override
			public Decision peek(Acquisition acquisition) {
				throw new IllegalStateException("down");
			}

			@Override
			public void reset(String limitId, String key) {
			}

		};
		RequestLimiter failing = new RequestLimiter(down, DecisionRecorder.NONE,
				new RejectionLog(this.clock, Duration.ofMinutes(1)), false, 1, RateLimitExemptions.NONE);
		// The request gave its slot back to wait; the store fails to give it again: it goes on holding none,
		// so its end gives nothing back a second time.
		assertThat(failing.retake(held)).noneMatch(Check::holdsSlot);
	}

	@Test
	void maxWaitingMustBePositive() {
		assertThatIllegalArgumentException().isThrownBy(() -> limiter(0)).withMessageContaining("maxWaiting");
	}

	private static RequestDecision decide(RequestLimiter limiter, List<RateLimitPolicy> policies) {
		return new RequestDecision(limiter.decide(view(request()), policies));
	}

	private RequestLimiter limiter(int maxWaiting) {
		return new RequestLimiter(this.store, DecisionRecorder.NONE, new RejectionLog(this.clock, Duration.ofMinutes(1)),
				false, maxWaiting, RateLimitExemptions.NONE);
	}

	private Acquisition acquisition(RateLimitPolicy policy) {
		return policy.acquisition(view(request()));
	}

	private static MockHttpServletRequest request() {
		MockHttpServletRequest request = new MockHttpServletRequest("GET", "/api/x");
		request.setRemoteAddr("203.0.113.7");
		return request;
	}

	private RateLimitPolicy policy(String name, Algorithm algorithm, long limit, Duration period, OnLimit onLimit,
			Duration maxDelay, String key) {
		return TestPolicies.define(new PolicyDefinition(name, name, "rate-limit.policies." + name, false,
				algorithm, limit, period, null, key, 1, onLimit, maxDelay, CountMode.ALL, false), this.keyResolvers);
	}

	private static ServletRequestView view(MockHttpServletRequest request) {
		return new ServletRequestView(request, ClientIpResolver.builder().build());
	}
}
