package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.Limit;
import io.github.ratelimit.core.OnFailure;
import io.github.ratelimit.core.Receipt;
import io.github.ratelimit.testsupport.RedisProcess;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code admitAllAsync}, as a reactive application calls it from an event loop: the caller's thread never
 * waits for Redis, on Lettuce (its own asynchronous calls, coalesced) and on Jedis (the store's pool); the
 * budget is exact; a paused Redis is decided by on-failure at the timeout, and a late reply's tokens are
 * given back. The sharing of one budget by both paths and the all-or-nothing across a cluster's slots are
 * {@link RedisGiveBackTests}'.
 */
class RedisAsyncAdmissionTests {

	@RegisterExtension
	static final RedisExtension redis = new RedisExtension();

	private static final Duration TIMEOUT = Duration.ofMillis(200);

	private static final Limit LIMIT = Limit.builder().limit(20).period(Duration.ofHours(1)).build();

	private static final Acquisition ACQUISITION = new Acquisition("api", LIMIT, "k", 1);

	private final List<RedisConnectionFactory> factories = new ArrayList<>();

	private final List<RedisRateLimitStore> stores = new ArrayList<>();

	@BeforeEach
	void flush() {
		redis.commands().flushall();
	}

	@AfterEach
	void close() {
		this.stores.forEach(RedisRateLimitStore::close);
		for (RedisConnectionFactory factory : this.factories) {
			if (factory instanceof LettuceConnectionFactory lettuce) {
				lettuce.destroy();
			}
			else {
				((JedisConnectionFactory) factory).destroy();
			}
		}
	}

	/** 64 admissions sent by one thread without waiting, as an event loop sends them, half to each instance. */
	@ParameterizedTest
	@ValueSource(strings = { "lettuce", "jedis" })
	void admissionsSentWithoutWaitingShareTheBudgetExactly(String client) throws Exception {
		RedisRateLimitStore[] both = { store(client, OnFailure.DENY, null), store(client, OnFailure.DENY, null) };
		List<CompletableFuture<List<Receipt>>> steps = new ArrayList<>();
		for (int i = 0; i < 64; i++) {
			steps.add(both[i % 2].admitAllAsync(List.of(ACQUISITION)).toCompletableFuture());
		}
		long allowed = 0;
		for (CompletableFuture<List<Receipt>> step : steps) {
			allowed += step.get(30, TimeUnit.SECONDS).get(0).decision().isAllowed() ? 1 : 0;
		}
		assertThat(allowed).isEqualTo(20);
		assertThat(both[0].fallbacks() + both[1].fallbacks()).isZero();
		assertThat(both[0].peek(ACQUISITION).remaining()).isZero();
	}

	@ParameterizedTest
	@ValueSource(strings = { "lettuce", "jedis" })
	void aPausedRedisNeverHoldsTheCallersThreadAndOnFailureDecidesAtTheTimeout(String client) throws Exception {
		RedisRateLimitStore store = store(client, OnFailure.DENY, null);
		assertThat(store.admitAll(List.of(ACQUISITION)).get(0).decision().remaining()).isEqualTo(19);
		redis.process().freeze();
		try {
			long start = System.nanoTime();
			CompletableFuture<List<Receipt>> step = store.admitAllAsync(List.of(ACQUISITION)).toCompletableFuture();
			assertThat(step).as("returned before Redis answered").isNotDone();
			// Completed while Redis is still frozen: at the timeout, not when Redis answers.
			Receipt receipt = step.get(30, TimeUnit.SECONDS).get(0);
			assertThat(System.nanoTime() - start).as("the timeout, not the client's own (a minute)")
				.isBetween(TIMEOUT.toNanos(), Duration.ofSeconds(5).toNanos());
			assertThat(receipt.decision().isAllowed()).as("denied by on-failure").isFalse();
			assertThat(receipt.place()).isEqualTo(Receipt.Place.NOWHERE);
			assertThat(store.fallbacks()).isEqualTo(1);
		}
		finally {
			redis.process().thaw();
		}
		assertThat(store.peek(ACQUISITION).remaining()).as("the call Redis ran late took nothing").isEqualTo(19);
	}

	@Test
	void aLateReplyThatTookTokensIsGivenBack() throws Exception {
		// A clock of the test's own: scripts then get no deadline in server time, so the paused call runs on
		// resume and takes its token; its late reply shows that, and the store gives it back.
		AtomicLong now = new AtomicLong(System.currentTimeMillis() * 1000);
		RedisRateLimitStore store = store("lettuce", OnFailure.DENY, now);
		assertThat(store.admitAll(List.of(ACQUISITION)).get(0).decision().remaining()).isEqualTo(19);
		redis.process().freeze();
		try {
			assertThat(store.admitAllAsync(List.of(ACQUISITION)).toCompletableFuture().get(30, TimeUnit.SECONDS).get(0)
				.decision()
				.isAllowed()).isFalse();
		}
		finally {
			redis.process().thaw();
		}
		long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
		while (store.giveBacks.lateReplies.sum() == 0 && System.nanoTime() < deadline) {
			RedisProcess.sleep(20);
		}
		assertThat(store.giveBacks.lateReplies.sum()).isEqualTo(1);
		while (store.peek(ACQUISITION).remaining() != 19 && System.nanoTime() < deadline) {
			RedisProcess.sleep(20);
		}
		assertThat(store.peek(ACQUISITION).remaining()).isEqualTo(19);
	}

	private RedisRateLimitStore store(String client, OnFailure onFailure, AtomicLong clock) {
		RedisConnectionFactory factory;
		if (client.equals("jedis")) {
			JedisConnectionFactory jedis = new JedisConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", redis.port()));
			jedis.afterPropertiesSet();
			jedis.start();
			factory = jedis;
		}
		else {
			factory = redis.newFastReconnectingFactory();
		}
		this.factories.add(factory);
		RedisRateLimitStore.Builder builder = RedisRateLimitStore.builder(factory)
			.timeout(TIMEOUT)
			.onFailure(onFailure)
			.breaker(1000, Duration.ofSeconds(1));
		if (clock != null) {
			builder.clock(clock::get);
		}
		RedisRateLimitStore store = builder.build();
		this.stores.add(store);
		return store;
	}

}
