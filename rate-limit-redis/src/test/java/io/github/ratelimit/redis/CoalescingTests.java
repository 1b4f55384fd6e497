package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.Decision;
import io.github.ratelimit.core.Limit;
import io.github.ratelimit.core.OnFailure;
import io.github.ratelimit.core.Receipt;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Coalesced script calls stay exact: 32 threads, two stores (two instances) on one real Redis,
 * standalone and a real three-master cluster, requests of one and of two limits (all or nothing
 * each): every key admits exactly its limit, no request of two limits is half taken, and Redis ran
 * fewer script calls than there were decisions (counted by {@code INFO commandstats}).
 */
class CoalescingTests {

	@RegisterExtension
	static final RedisExtension redis = new RedisExtension();

	private static final int THREADS = 32;

	private static final int KEYS = 20;

	private static final Limit LIMIT = Limit.builder().limit(25).period(Duration.ofHours(1)).build();

	private static final Limit PAIR = Limit.builder().limit(10).period(Duration.ofHours(1)).build();

	@Test
	void coalescedCallsAreExactOnStandalone() throws Exception {
		redis.commands().flushall();
		long callsBefore = scriptCalls(redis.port());
		long decisions = exactlyTheLimits(redis.connectionFactory(), redis.connectionFactory(), true);
		long calls = scriptCalls(redis.port()) - callsBefore;
		System.out.println("Coalescing, standalone: " + decisions + " decisions in " + calls + " script calls");
		assertThat(calls).isLessThan(decisions);
	}

	@Test
	void coalescedCallsAreExactOnACluster() throws Exception {
		TestRedisCluster cluster = TestRedisCluster.shared();
		LettuceConnectionFactory one = cluster.connectionFactory();
		LettuceConnectionFactory two = cluster.connectionFactory();
		try {
			exactlyTheLimits(one, two, false);
		}
		finally {
			one.destroy();
			two.destroy();
		}
	}

	@Test
	void aFailedCoalescedCallCountsOnceForTheBreaker() throws Exception {
		redis.commands().flushall();
		RedisRateLimitStore store = RedisRateLimitStore.builder(redis.connectionFactory())
			.timeout(Duration.ofSeconds(1))
			.onFailure(OnFailure.DENY)
			.breaker(3, Duration.ofSeconds(1))
			.build();
		try {
			Acquisition acquisition = new Acquisition("api", LIMIT, "paused", 1);
			assertThat(store.tryAcquire(acquisition).remaining()).isEqualTo(24);
			CountDownLatch start = new CountDownLatch(1);
			ExecutorService executor = Executors.newFixedThreadPool(16);
			List<Future<Decision>> futures = new ArrayList<>();
			for (int t = 0; t < 16; t++) {
				futures.add(executor.submit(() -> {
					start.await();
					return store.tryAcquire(acquisition);
				}));
			}
			// Frozen until every request was decided; the timeout leaves the 16 a second to arrive together.
			redis.process().freeze();
			start.countDown();
			try {
				for (Future<Decision> future : futures) {
					assertThat(future.get(30, TimeUnit.SECONDS).isAllowed()).as("decided by on-failure=deny").isFalse();
				}
			}
			finally {
				redis.process().thaw();
				executor.shutdown();
			}
			assertThat(store.fallbacks()).isEqualTo(16);
			// The first two went alone (two calls in flight per lane); the others waited behind them and were never
			// sent: one failure per call.
			assertThat(store.errors()).isLessThan(3);
			assertThat(store.isAvailable()).as("16 requests in one or two calls do not open a breaker of 3").isTrue();
			assertThat(store.peek(acquisition).remaining()).as("nothing taken by the timed-out requests").isEqualTo(24);
		}
		finally {
			store.close();
		}
	}

	/**
	 * One coalesced call whose requests alternate between limits, each limit's values sent once: every
	 * request is decided by its own (a wrong limit would decide the third request by the second's burst
	 * of 5, or the window by a bucket).
	 */
	@Test
	void aBatchDecidesEachRequestByItsOwnLimit() throws Exception {
		redis.commands().flushall();
		Limit two = Limit.builder().limit(2).period(Duration.ofHours(1)).build();
		Limit five = Limit.builder().limit(5).period(Duration.ofHours(1)).build();
		Limit window = Limit.builder().algorithm(io.github.ratelimit.core.Algorithm.FIXED_WINDOW).limit(3)
			.period(Duration.ofHours(1)).build();
		// key, limit, cost, per request (one acquisition each, but the fifth, which has two)
		List<List<Acquisition>> requests = List.of(List.of(new Acquisition("b", two, "a", 1)),
				List.of(new Acquisition("b", five, "b", 1)), List.of(new Acquisition("b", two, "a", 1)),
				List.of(new Acquisition("b", two, "c", 2)),
				List.of(new Acquisition("b", two, "d", 1), new Acquisition("b", five, "e", 2)),
				List.of(new Acquisition("b", five, "b", 1)), List.of(new Acquisition("b", window, "f", 1)),
				List.of(new Acquisition("b", two, "a", 1)));
		// The batch format of driver.lua: no deadline, each distinct limit once, each distinct acquisition
		// (limit, cost, max wait) once, then per request its acquisitions by that index.
		List<Limit> limits = List.of(two, five, window);
		List<List<Long>> shapes = new ArrayList<>();
		for (List<Acquisition> request : requests) {
			for (Acquisition acquisition : request) {
				List<Long> shape = List.of(limits.indexOf(acquisition.limit()) + 1L, acquisition.cost(), 0L);
				if (!shapes.contains(shape)) {
					shapes.add(shape);
				}
			}
		}
		List<byte[]> keys = new ArrayList<>();
		List<byte[]> args = new ArrayList<>(
				List.of(new byte[0], bytes("batch"), bytes(requests.size()), new byte[0], bytes(limits.size())));
		for (Limit limit : limits) {
			args.add(bytes(limit.algorithm().id()));
			args.add(bytes(limit.limit()));
			args.add(bytes(-Math.floorDiv(-limit.period().toNanos(), 1000L)));
			args.add(bytes(limit.burst()));
			args.add(bytes(-Math.floorDiv(-limit.emissionIntervalNanos(), 1000L)));
		}
		args.add(bytes(shapes.size()));
		shapes.forEach((shape) -> shape.forEach((value) -> args.add(bytes(value))));
		for (List<Acquisition> request : requests) {
			args.add(new byte[0]);
			args.add(bytes(request.size()));
			for (Acquisition acquisition : request) {
				keys.add(bytes("rate-limit:{" + acquisition.limitId() + ":" + acquisition.key() + "}"));
				args.add(bytes(shapes.indexOf(List.of(limits.indexOf(acquisition.limit()) + 1L, acquisition.cost(), 0L)) + 1));
			}
		}
		LuaScripts scripts = LuaScripts.load();
		try (LettuceScriptRunner runner = new LettuceScriptRunner(redis.connectionFactory())) {
			List<Acquisition> all = requests.stream().flatMap(List::stream).toList();
			List<Long> reply = runner.run(scripts.forAcquisitions(all), keys.toArray(new byte[0][]),
					args.toArray(new byte[0][]), System.nanoTime() + Duration.ofSeconds(10).toNanos());
			// Per request: a bucket's single acquisition as one compact integer; else -1 - n, then allowed and
			// remaining first of each decision's 8.
			List<String> decided = new ArrayList<>();
			List<String> forms = new ArrayList<>();
			int at = 0;
			for (List<Acquisition> request : requests) {
				if (reply.get(at) >= 0) {
					Decision decision = ReplyPart.compactDecision(request.get(0), reply.get(at));
					decided.add((decision.isAllowed() ? "allowed " : "rejected ") + decision.remaining());
					forms.add("compact");
					at++;
					continue;
				}
				assertThat(reply.get(at)).isEqualTo(-1L - request.size());
				forms.add("full");
				at++;
				StringBuilder one = new StringBuilder();
				for (int i = 0; i < request.size(); i++) {
					one.append((reply.get(at) == 1) ? "allowed " : "rejected ").append(reply.get(at + 1)).append(' ');
					at += 8;
				}
				decided.add(one.toString().trim());
			}
			assertThat(forms).containsExactly("compact", "compact", "compact", "compact", "full", "compact", "full",
					"compact");
			assertThat(at).isEqualTo(reply.size() - 1);
			assertThat(decided).containsExactly("allowed 1", "allowed 4", "allowed 0", "allowed 0",
					"allowed 1 allowed 3", "allowed 3", "allowed 2", "rejected 0");
		}
	}

	/**
	 * A batch member past its own deadline changes nothing (reply -1), also when the others are decided: the
	 * script reads the members' deadlines once the call runs past the earliest of them.
	 */
	@Test
	void aBatchMemberPastItsDeadlineChangesNothing() throws Exception {
		redis.commands().flushall();
		Limit limit = Limit.builder().limit(5).period(Duration.ofHours(1)).build();
		long future = 4_102_444_800_000_000L;
		List<byte[]> args = new ArrayList<>(List.of(new byte[0], bytes("batch"), bytes(3), bytes(1), bytes(1),
				bytes("token-bucket"), bytes(limit.limit()), bytes(limit.period().toNanos() / 1000), bytes(limit.burst()),
				bytes(limit.emissionIntervalNanos() / 1000), bytes(1), bytes(1), bytes(1), bytes(0)));
		// Per request: its deadline (the second's passed at 1 us after the epoch), one acquisition, shape 1.
		for (Object deadline : List.of(future, 1, "")) {
			args.addAll(List.of(bytes(deadline), bytes(1), bytes(1)));
		}
		byte[][] keys = { bytes("rate-limit:{d:a}"), bytes("rate-limit:{d:b}"), bytes("rate-limit:{d:c}") };
		Acquisition one = new Acquisition("d", limit, "a", 1);
		try (LettuceScriptRunner runner = new LettuceScriptRunner(redis.connectionFactory())) {
			List<Long> reply = runner.run(LuaScripts.load().forAcquisitions(List.of(one)), keys,
					args.toArray(new byte[0][]), System.nanoTime() + Duration.ofSeconds(10).toNanos());
			assertThat(reply).hasSize(4);
			assertThat(ReplyPart.compactDecision(one, reply.get(0)).remaining()).isEqualTo(4);
			assertThat(reply.get(1)).isEqualTo(-1L);
			assertThat(ReplyPart.compactDecision(one, reply.get(2)).remaining()).isEqualTo(4);
		}
		assertThat(redis.commands().exists("rate-limit:{d:a}", "rate-limit:{d:b}", "rate-limit:{d:c}")).isEqualTo(2L);
		assertThat(redis.commands().exists("rate-limit:{d:b}")).isZero();
	}

	/**
	 * Requests of one bucket shape go to lone-bucket.lua together, one key each: each is decided on its
	 * own and in order (the same key twice spends twice), and one past its own deadline changes nothing.
	 */
	@Test
	void aBatchOfOneBucketShapeDecidesEachMemberInOrderAndByItsOwnDeadline() throws Exception {
		redis.commands().flushall();
		Limit limit = Limit.builder().limit(5).period(Duration.ofHours(1)).build();
		long future = 4_102_444_800_000_000L;
		// The plain format with the earliest deadline (1 us after the epoch: passed), then each request's own.
		List<byte[]> args = new ArrayList<>(List.of(new byte[0], bytes("acquire"), bytes(1), bytes("token-bucket"),
				bytes(1), bytes(0), bytes(limit.limit()), bytes(limit.period().toNanos() / 1000), bytes(limit.burst()),
				bytes(limit.emissionIntervalNanos() / 1000)));
		for (Object deadline : List.of(future, 1, "", future)) {
			args.add(bytes(deadline));
		}
		byte[][] keys = { bytes("rate-limit:{l:a}"), bytes("rate-limit:{l:b}"), bytes("rate-limit:{l:c}"),
				bytes("rate-limit:{l:a}") };
		Acquisition one = new Acquisition("l", limit, "a", 1);
		LuaScript script = LuaScripts.load().forAcquire(List.of(one));
		try (LettuceScriptRunner runner = new LettuceScriptRunner(redis.connectionFactory())) {
			List<Long> reply = runner.run(script, keys, args.toArray(new byte[0][]),
					System.nanoTime() + Duration.ofSeconds(10).toNanos());
			assertThat(reply).hasSize(5);
			assertThat(ReplyPart.compactDecision(one, reply.get(0)).remaining()).isEqualTo(4);
			assertThat(reply.get(1)).isEqualTo(-1L);
			assertThat(ReplyPart.compactDecision(one, reply.get(2)).remaining()).isEqualTo(4);
			assertThat(ReplyPart.compactDecision(one, reply.get(3)).remaining()).isEqualTo(3);
		}
		assertThat(redis.commands().exists("rate-limit:{l:b}")).isZero();
		assertThat(redis.commands().exists("rate-limit:{l:a}", "rate-limit:{l:c}")).isEqualTo(2L);
	}

	/**
	 * A batch of one bucket shape sent to lone-bucket.lua answers and writes what driver.lua's batch does for
	 * the same requests, on states of every form (this interval, another, the old bare one, odd) and with
	 * keys repeated within the batch.
	 */
	@Test
	void aBatchOfOneBucketShapeAgreesWithTheDriversBatch() throws Exception {
		java.util.Random random = new java.util.Random(12_000L);
		LuaScripts scripts = LuaScripts.load();
		long now = 1_767_225_600_000_000L;
		try (LettuceScriptRunner runner = new LettuceScriptRunner(redis.connectionFactory())) {
			for (int trial = 0; trial < 200; trial++) {
				redis.commands().flushall();
				now += 1 + random.nextInt(1_000_000);
				boolean leaky = random.nextBoolean();
				Limit limit = Limit.builder()
					.limit(1 + random.nextInt(20))
					.period(Duration.ofSeconds(1 + random.nextInt(3600)))
					.algorithm(leaky ? io.github.ratelimit.core.Algorithm.LEAKY_BUCKET
							: io.github.ratelimit.core.Algorithm.TOKEN_BUCKET)
					.build();
				long interval = limit.emissionIntervalNanos() / 1000;
				long cost = 1 + random.nextInt((int) limit.burst());
				long maxWait = random.nextBoolean() ? random.nextLong(limit.period().toNanos() / 1000 + 1) : 0;
				int n = 2 + random.nextInt(6);
				byte[][] loneKeys = new byte[n][];
				byte[][] driverKeys = new byte[n][];
				for (int i = 0; i < n; i++) {
					String name = "k" + random.nextInt(3);
					loneKeys[i] = bytes("rate-limit:{lone:" + name + "}");
					driverKeys[i] = bytes("rate-limit:{driver:" + name + "}");
				}
				for (int k = 0; k < 3; k++) {
					long otherInterval = 1 + random.nextInt(10_000_000);
					long tat = now + random.nextLong(interval * limit.burst() * 2 + 1) - interval;
					String state = switch (random.nextInt(5)) {
						case 0 -> Long.toString(tat);
						case 1 -> "odd";
						case 2 -> tat + " " + otherInterval;
						default -> tat + " " + interval;
					};
					redis.commands().set("rate-limit:{lone:k" + k + "}", state);
					redis.commands().set("rate-limit:{driver:k" + k + "}", state);
				}
				List<byte[]> lone = new ArrayList<>(List.of(bytes(now), bytes("acquire"), new byte[0],
						bytes(limit.algorithm().id()), bytes(cost), bytes(maxWait), bytes(limit.limit()),
						bytes(limit.period().toNanos() / 1000), bytes(limit.burst()), bytes(interval)));
				List<byte[]> driver = new ArrayList<>(List.of(bytes(now), bytes("batch"), bytes(n), new byte[0], bytes(1),
						bytes(limit.algorithm().id()), bytes(limit.limit()), bytes(limit.period().toNanos() / 1000),
						bytes(limit.burst()), bytes(interval), bytes(1), bytes(1), bytes(cost), bytes(maxWait)));
				for (int i = 0; i < n; i++) {
					lone.add(new byte[0]);
					driver.addAll(List.of(new byte[0], bytes(1), bytes(1)));
				}
				Acquisition one = new Acquisition("x", limit, "k", cost);
				long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
				List<Long> loneReply = runner.run(scripts.forAcquire(List.of(one)), loneKeys,
						lone.toArray(new byte[0][]), deadline);
				List<Long> driverReply = runner.run(scripts.forAcquisitions(List.of(one)), driverKeys,
						driver.toArray(new byte[0][]), deadline);
				String what = "trial " + trial + ": " + limit + " cost=" + cost + " maxWait=" + maxWait + " keys="
						+ Arrays.stream(loneKeys).map(String::new).toList();
				assertThat(loneReply).as(what).isEqualTo(driverReply);
				for (int k = 0; k < 3; k++) {
					assertThat(redis.commands().get("rate-limit:{lone:k" + k + "}")).as(what)
						.isEqualTo(redis.commands().get("rate-limit:{driver:k" + k + "}"));
				}
			}
		}
	}

	/**
	 * A call of one request is sent in the plain format, whose reply is that request's own part (8
	 * integers per acquisition, or a compact one, or -1 past its deadline) then the time; a batch reply
	 * tags a request of 8 integers with -1 - n. Either way each request gets its part alone.
	 */
	@Test
	void aLoneRequestGetsItsWholeReplyAndABatchItsTaggedPart() {
		Acquisition one = new Acquisition("w", LIMIT, "a", 1);
		List<Long> eight = List.of(1L, 24L, 3_600_000_000L, 0L, 0L, 0L, 144_000_000L, 0L);
		for (List<Long> part : List.of(eight, List.of(288_000_000L), List.of(-1L))) {
			Coalescer.Pending alone = pending(one);
			List<Long> reply = new ArrayList<>(part);
			reply.add(42L);
			Coalescer.split(List.of(alone), reply);
			ReplyPart got = alone.reply.join();
			assertThat(got.serverTime()).isEqualTo(42L);
			assertThat(got.size()).isEqualTo(part.size());
			for (int i = 0; i < part.size(); i++) {
				assertThat(got.get(i)).isEqualTo(part.get(i));
			}
		}
		Coalescer.Pending full = pending(one);
		Coalescer.Pending compact = pending(one);
		List<Long> batch = new ArrayList<>(List.of(-2L));
		batch.addAll(eight);
		batch.addAll(List.of(288_000_000L, 42L));
		Coalescer.split(List.of(full, compact), batch);
		assertThat(full.reply.join().size()).isEqualTo(8);
		assertThat(full.reply.join().get(0)).isEqualTo(1L);
		assertThat(compact.reply.join().size()).isEqualTo(1);
		assertThat(compact.reply.join().get(0)).isEqualTo(288_000_000L);
	}

	private static Coalescer.Pending pending(Acquisition acquisition) {
		return new Coalescer.Pending(List.of(acquisition), new byte[][] { bytes("k") }, ServerClock.NONE, Receipt.NO_MARK);
	}

	private static byte[] bytes(Object value) {
		return String.valueOf(value).getBytes(java.nio.charset.StandardCharsets.UTF_8);
	}

	/** Runs the threads on two stores; returns how many decisions they made. */
	private static long exactlyTheLimits(RedisConnectionFactory first, RedisConnectionFactory second, boolean exactPairs)
			throws Exception {
		RedisRateLimitStore[] stores = { store(first), store(second) };
		AtomicIntegerArray allowed = new AtomicIntegerArray(KEYS);
		AtomicIntegerArray pairs = new AtomicIntegerArray(1);
		int perThread = 40;
		CountDownLatch start = new CountDownLatch(1);
		ExecutorService executor = Executors.newFixedThreadPool(THREADS);
		try {
			List<Future<?>> futures = new ArrayList<>();
			for (int t = 0; t < THREADS; t++) {
				int thread = t;
				futures.add(executor.submit(() -> {
					start.await();
					RedisRateLimitStore store = stores[thread % 2];
					int single = 0;
					for (int i = 0; i < perThread; i++) {
						if (i % 4 == 3) {
							// Two limits at once: both or neither.
							List<Decision> both = store.tryAcquireAll(List.of(new Acquisition("pair-a", PAIR, "p", 1),
									new Acquisition("pair-b", PAIR, "p", 1)));
							if (both.get(0).isAllowed() && both.get(1).isAllowed()) {
								pairs.incrementAndGet(0);
							}
							continue;
						}
						int key = (thread + single++) % KEYS;
						if (store.tryAcquire(new Acquisition("api", LIMIT, "k" + key, 1)).isAllowed()) {
							allowed.incrementAndGet(key);
						}
					}
					return null;
				}));
			}
			start.countDown();
			for (Future<?> future : futures) {
				future.get(120, TimeUnit.SECONDS);
			}
		}
		finally {
			executor.shutdownNow();
		}
		for (RedisRateLimitStore store : stores) {
			assertThat(store.errors()).isZero();
			assertThat(store.fallbacks()).isZero();
		}
		// Both or neither: what is left of each equals what the requests that got both took.
		long leftA = stores[0].peek(new Acquisition("pair-a", PAIR, "p", 1)).remaining();
		long leftB = stores[0].peek(new Acquisition("pair-b", PAIR, "p", 1)).remaining();
		for (RedisRateLimitStore store : stores) {
			store.close();
		}
		int[] counts = new int[KEYS];
		for (int key = 0; key < KEYS; key++) {
			counts[key] = allowed.get(key);
		}
		// 32 x 30 single requests over 20 keys: at least 32 each, of which exactly 25 pass.
		assertThat(counts).as(Arrays.toString(counts)).containsOnly(25);
		if (exactPairs) {
			// One script call for both: exactly the limit.
			assertThat(pairs.get(0)).isEqualTo(10);
		}
		else {
			// A cluster, the two keys in two slots: acquired one after the other and given back on a
			// rejection, so a concurrent request may see tokens briefly taken: never more than the limit.
			assertThat(pairs.get(0)).isBetween(1, 10);
		}
		assertThat(leftA).isEqualTo(10 - pairs.get(0));
		assertThat(leftB).isEqualTo(10 - pairs.get(0));
		return (long) THREADS * perThread;
	}

	private static RedisRateLimitStore store(RedisConnectionFactory factory) {
		// No rejection cache, so that every decision reaches Redis; a long timeout, so that none is a fallback.
		return RedisRateLimitStore.builder(factory).timeout(Duration.ofSeconds(10)).rejectionCache(Duration.ZERO).build();
	}

	static long scriptCalls(int port) {
		io.lettuce.core.RedisClient client = io.lettuce.core.RedisClient.create("redis://127.0.0.1:" + port);
		try (var connection = client.connect()) {
			long calls = 0;
			for (String line : connection.sync().info("commandstats").split("\r?\n")) {
				if (line.startsWith("cmdstat_evalsha:") || line.startsWith("cmdstat_eval:")) {
					String field = line.substring(line.indexOf("calls=") + 6);
					calls += Long.parseLong(field.substring(0, field.indexOf(',')));
				}
			}
			return calls;
		}
		finally {
			client.shutdown();
		}
	}
}
