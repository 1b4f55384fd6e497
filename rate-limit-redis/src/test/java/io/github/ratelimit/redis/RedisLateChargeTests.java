package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.CaffeineRateLimitStore;
import io.github.ratelimit.core.Decision;
import io.github.ratelimit.core.Limit;
import io.github.ratelimit.core.OnFailure;

import io.github.ratelimit.test.ManualClock;
import io.github.ratelimit.testsupport.RedisProcess;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * No late charges: calls sent while Redis is paused ({@code CLIENT PAUSE}, a real pause of a real
 * server) time out and are decided by on-failure; when Redis resumes and runs them, they change
 * nothing (the script's deadline in server time has passed), so the budget left equals what the
 * answered requests spent, in deny and local modes. Where no deadline could be set, the late reply's
 * tokens are given back.
 */
class RedisLateChargeTests {

	@RegisterExtension
	static final RedisExtension redis = new RedisExtension();

	private static final Duration TIMEOUT = Duration.ofMillis(100);

	private static final Limit LIMIT = Limit.builder().limit(10).period(Duration.ofHours(1)).build();

	private static final Acquisition ACQUISITION = new Acquisition("api", LIMIT, "k", 1);

	private LettuceConnectionFactory factory;

	private final List<RedisRateLimitStore> stores = new ArrayList<>();

	/** The calls that timed out while Redis was frozen, each sent. */
	private long timedOut;

	@BeforeEach
	void connect() {
		redis.commands().flushall();
		this.factory = redis.newFastReconnectingFactory();
	}

	@AfterEach
	void close() {
		this.stores.forEach(RedisRateLimitStore::close);
		this.factory.destroy();
	}

	private RedisRateLimitStore store(OnFailure onFailure, RedisRateLimitStore.Builder builder) {
		RedisRateLimitStore store = builder.timeout(TIMEOUT)
			.onFailure(onFailure)
			.breaker(1000, Duration.ofSeconds(1))
			.build();
		this.stores.add(store);
		return store;
	}

	@Test
	void denyCallsThatTimedOutDuringAPauseTakeNothing() {
		RedisRateLimitStore store = store(OnFailure.DENY, RedisRateLimitStore.builder(this.factory));
		assertThat(spendTwoThenFourDuringAPause(store)).noneMatch(Decision::isAllowed);
		assertThat(store.peek(ACQUISITION).remaining()).as("10 less the 2 answered").isEqualTo(8);
		assertThat(store.giveBacks.lateReplies.sum()).isZero();
	}

	@Test
	void localCallsThatTimedOutDuringAPauseAreCountedLocallyOnly() {
		CaffeineRateLimitStore local = new CaffeineRateLimitStore(1000, new ManualClock());
		RedisRateLimitStore store = store(OnFailure.LOCAL, RedisRateLimitStore.builder(this.factory).localStore(local));
		assertThat(spendTwoThenFourDuringAPause(store)).allMatch(Decision::isAllowed);
		assertThat(store.peek(ACQUISITION).remaining()).as("10 less the 2 answered").isEqualTo(8);
		assertThat(local.peek(ACQUISITION).remaining()).as("the 4 decided locally").isEqualTo(6);
		assertThat(store.giveBacks.lateReplies.sum()).isZero();
	}

	@Test
	void aLateReplyThatTookTokensIsGivenBack() {
		// A clock of the test's own: scripts then get no deadline in server time, so a paused call runs
		// on resume and takes its token; its late reply shows that, and the store gives it back.
		AtomicLong now = new AtomicLong(System.currentTimeMillis() * 1000);
		RedisRateLimitStore store = store(OnFailure.DENY, RedisRateLimitStore.builder(this.factory).clock(now::get));
		assertThat(spendTwoThenFourDuringAPause(store)).noneMatch(Decision::isAllowed);
		// Every call that was sent and timed out replies late; one that waited behind two calls in flight
		// and gave up before it was sent never runs (and is no error of its own).
		long sent = this.timedOut;
		long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
		while (store.giveBacks.lateReplies.sum() < sent && System.nanoTime() < deadline) {
			RedisProcess.sleep(20);
		}
		assertThat(store.giveBacks.lateReplies.sum()).isEqualTo(sent);
		while (remaining(store) != 8 && System.nanoTime() < deadline) {
			RedisProcess.sleep(20);
		}
		assertThat(store.peek(ACQUISITION).remaining()).as("10 less the 2 answered").isEqualTo(8);
	}

	/** What Redis shows of the budget, or -1 when it did not answer in time (a peek makes nothing up). */
	private static long remaining(RedisRateLimitStore store) {
		try {
			return store.peek(ACQUISITION).remaining();
		}
		catch (IllegalStateException ex) {
			return -1;
		}
	}

	private List<Decision> spendTwoThenFourDuringAPause(RedisRateLimitStore store) {
		for (int i = 0; i < 20 && store.errors() == 0 && remaining(store) == 10; i++) {
			// the first calls connect and learn the server's clock
		}
		assertThat(store.tryAcquire(ACQUISITION).remaining()).isEqualTo(9);
		assertThat(store.tryAcquire(ACQUISITION).remaining()).isEqualTo(8);
		// Frozen until the 4 calls below all timed out, however starved the CPU.
		long errors = store.errors();
		long fallbacks = store.fallbacks();
		List<Decision> decisions = new ArrayList<>();
		redis.process().freeze();
		try {
			for (int i = 0; i < 4; i++) {
				decisions.add(store.tryAcquire(ACQUISITION));
			}
		}
		finally {
			redis.process().thaw();
		}
		assertThat(store.fallbacks() - fallbacks).as("the 4 decided by on-failure").isEqualTo(4);
		// Each call sent timed out; a call that found two in flight waited for the lane, gave up unsent, and
		// counts no error of its own (the calls ahead of it count theirs), so 3 or 4.
		this.timedOut = store.errors() - errors;
		assertThat(this.timedOut).as("the calls that timed out").isBetween(3L, 4L);
		return decisions;
	}
}
