package io.github.ratelimit.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.Decision;
import io.github.ratelimit.core.Limit;
import io.github.ratelimit.core.OnFailure;
import io.github.ratelimit.core.RateLimitStore;
import io.github.ratelimit.core.Receipt;
import io.github.ratelimit.testsupport.BareState;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.assertj.core.api.Assertions.within;

/**
 * Every algorithm's Lua script decides exactly like its Java {@link BareState}, field by field,
 * on randomised request sequences (fixed seeds) at the same microsecond-aligned times: single
 * acquisitions with and without a maximum wait, releases, and all-or-nothing acquisitions of several
 * limits in one script call, checked against {@link RateLimitStore#tryAcquireAll(List)}'s default, and
 * read-only checks of one or several limits (which must leave every key as it was). Give-backs of
 * receipts agree with their Java definition ({@link GiveBack}, the one the in-process store implements),
 * state by state.
 * <p>
 * Redis expires keys on its own, real, clock; the test's clock jumps. With a test clock the scripts
 * give keys an extra hour, so the test reads each key's TTL after every call that wrote it (there
 * must be one), and deletes the key itself once that TTL (less the hour) has passed in test time,
 * checking first that the Java state is then as fresh as a new one: expiry never changes a decision.
 */
class ScriptAgreementTests {

	@RegisterExtension
	static final RedisExtension redis = new RedisExtension();

	private static final int SEQUENCES = 8;

	private static final int STEPS = 250;

	/** Keys written with a test clock live an hour longer (see prelude.lua). */
	private static final long TEST_TTL_OFFSET = 3_600_000;

	private final AtomicLong now = new AtomicLong();

	private RedisRateLimitStore store;

	/** The same Redis without coalescing: one script call per decision, the driver's single-call replies. */
	private RedisRateLimitStore single;

	@BeforeEach
	void createStore() {
		redis.commands().flushall();
		this.store = RedisRateLimitStore.builder(redis.connectionFactory())
			.timeout(Duration.ofSeconds(5))
			.onFailure(OnFailure.DENY)
			.clustered(false)
			.clock(this.now::get)
			.build();
		this.single = RedisRateLimitStore.builder(redis.connectionFactory())
			.timeout(Duration.ofSeconds(5))
			.onFailure(OnFailure.DENY)
			.clustered(false)
			.coalescing(false)
			.clock(this.now::get)
			.build();
	}

	@AfterEach
	void closeStore() {
		this.store.close();
		this.single.close();
		assertThat(this.store.errors()).isZero();
		assertThat(this.single.errors()).isZero();
	}

	private final Map<String, Integer> outcomes = new TreeMap<>();

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
	void scriptsAgreeWithTheJavaAlgorithm(Algorithm algorithm) {
		for (int sequence = 0; sequence < SEQUENCES; sequence++) {
			Random random = new Random(4_000L + 31L * sequence + algorithm.ordinal());
			run(List.of(randomLimit(algorithm, random), randomLimit(algorithm, random)), random, sequence);
		}
		assertThat(this.outcomes).containsKeys("allowed", "rejected", "released", "rejectedAll", "expired",
				"checkAllowed", "checkRejected");
		if (algorithm.canDelay()) {
			assertThat(this.outcomes).containsKey("delayed");
		}
	}

	@Test
	void theCombinedScriptAgreesWhenLimitsUseDifferentAlgorithms() {
		// The rates: a concurrency limit's agreement has tests of its own (ConcurrencyLeaseTests).
		Algorithm[] algorithms = java.util.Arrays.stream(Algorithm.values()).filter(Algorithm::isRate).toArray(Algorithm[]::new);
		for (int sequence = 0; sequence < SEQUENCES; sequence++) {
			Random random = new Random(9_000L + sequence);
			List<Limit> limits = new ArrayList<>();
			for (int i = 0; i < 3; i++) {
				limits.add(randomLimit(algorithms[random.nextInt(algorithms.length)], random));
			}
			run(limits, random, sequence);
		}
		assertThat(this.outcomes).containsKeys("allowed", "rejected", "released", "rejectedAll");
	}

	/**
	 * A key's limit changes from one request to the next (a client switching plans): the script moves
	 * the state as {@link BareState#moveTo} does. The two limits of an id have the same emission
	 * interval (buckets) or the same period and another limit (windows) so that both sides compute
	 * with the same numbers; a fixed window and a log also change period.
	 */
	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
	void scriptsAgreeWhenAKeysLimitChanges(Algorithm algorithm) {
		for (int sequence = 0; sequence < SEQUENCES; sequence++) {
			Random random = new Random(7_000L + 31L * sequence + algorithm.ordinal());
			Limit first = randomLimit(algorithm, random);
			Limit.Builder other = Limit.builder().algorithm(algorithm);
			if (algorithm.hasBurst()) {
				other.limit(first.limit()).period(first.period()).burst(1 + random.nextInt((int) first.limit() * 3));
			}
			else if (algorithm == Algorithm.FIXED_WINDOW || algorithm == Algorithm.SLIDING_WINDOW_LOG) {
				long limit = 1 + random.nextInt(12);
				other.limit(limit).period(Duration.ofNanos(limit * (first.period().toNanos() / first.limit())
						* (1 + random.nextInt(3))));
			}
			else {
				other.limit(1 + random.nextInt(12)).period(first.period());
			}
			this.plans = List.of(first, other.build());
			run(List.of(first, randomLimit(algorithm, random)), random, sequence);
		}
		assertThat(this.outcomes).containsKeys("allowed", "rejected", "released", "moved");
	}

	/**
	 * A bucket's request alone goes to lone-bucket.lua, which writes out the prelude's state reading (and
	 * moving) rather than calling it: on states written under another emission interval (the plan
	 * changes above keep the interval, so that Java and Lua round alike), of old formats, or odd, it
	 * decides and writes exactly what the driver's path does for the same acquisition in a request of
	 * two limits.
	 */
	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = { "TOKEN_BUCKET", "LEAKY_BUCKET" })
	void aRequestAloneReadsAndMovesStatesAsTheDriverDoes(Algorithm algorithm) {
		Random random = new Random(11_000L + algorithm.ordinal());
		Limit other = Limit.builder().limit(1_000).period(Duration.ofHours(1)).build();
		long micros = 1_767_225_600_000_000L;
		int moved = 0;
		for (int trial = 0; trial < 300; trial++) {
			micros += 1 + random.nextInt(1_000_000);
			this.now.set(micros);
			Limit written = randomLimit(algorithm, random);
			Limit asked = randomLimit(algorithm, random);
			long writtenInterval = written.emissionIntervalNanos() / 1000;
			long tat = micros + random.nextLong(writtenInterval * written.burst() * 2 + 1) - writtenInterval;
			String state = switch (random.nextInt(6)) {
				case 0 -> Long.toString(tat);
				case 1 -> "odd";
				default -> tat + " " + writtenInterval;
			};
			moved += (state.endsWith(" " + writtenInterval) && written.emissionIntervalNanos() != asked.emissionIntervalNanos()
					&& tat > micros) ? 1 : 0;
			long cost = 1 + random.nextInt((int) asked.burst());
			long maxWait = (algorithm.canDelay() && random.nextBoolean())
					? random.nextLong(asked.period().toNanos() / 1000 + 1) * 1000 : 0;
			String id = "lone-" + trial;
			redis.commands().set(this.store.redisKey(id, "alone"), state);
			redis.commands().set(this.store.redisKey(id, "with-another"), state);
			Decision alone = this.single.tryAcquire(new Acquisition(id, asked, "alone", cost, maxWait));
			Decision withAnother = this.single.tryAcquireAll(List.of(new Acquisition(id, asked, "with-another", cost, maxWait),
					new Acquisition("lone-other", other, "k" + trial, 1))).get(0);
			String what = "trial " + trial + ": " + state + " (written under " + written + ") asked " + asked + " cost="
					+ cost + " maxWait=" + maxWait;
			assertThat(alone).as(what).isEqualTo(withAnother);
			assertThat(redis.commands().get(this.store.redisKey(id, "alone"))).as(what)
				.isEqualTo(redis.commands().get(this.store.redisKey(id, "with-another")));
			long aloneTtl = redis.commands().pttl(this.store.redisKey(id, "alone"));
			assertThat(aloneTtl).as(what).isCloseTo(redis.commands().pttl(this.store.redisKey(id, "with-another")),
					within(1_000L));
		}
		assertThat(moved).isGreaterThan(100);
	}

	/**
	 * Give-backs of receipts, on random sequences of admissions (coalesced or single calls), other requests'
	 * acquisitions, time passing and plan changes (the key's limit alternates between two limits of another
	 * interval or period): each admission's mark is where its cost sits in the state, and each give-back
	 * leaves the state exactly as the Java definition computes from the state before it.
	 */
	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
	void giveBacksAgreeWithTheirJavaDefinition(Algorithm algorithm) {
		Map<String, Integer> seen = new TreeMap<>();
		for (int sequence = 0; sequence < SEQUENCES; sequence++) {
			Random random = new Random(13_000L + 31L * sequence + algorithm.ordinal());
			Limit first = randomLimit(algorithm, random);
			List<Limit> plans = List.of(first, otherPlan(first, random));
			List<Receipt> held = new ArrayList<>();
			long micros = 1_767_225_600_000_000L + random.nextInt(1_000_000_000);
			List<String> history = new ArrayList<>();
			for (int step = 0; step < STEPS; step++) {
				Limit limit = plans.get((random.nextInt(4) == 0) ? 1 : 0);
				micros += advance(random, limit) / ((random.nextInt(3) == 0) ? 1 : 8);
				this.now.set(micros);
				String key = "k" + random.nextInt(2);
				int op = random.nextInt(10);
				if (op < 5) {
					long cost = 1 + ((random.nextInt(3) == 0) ? random.nextInt((int) Math.min(limit.limit(), limit.burst())) : 0);
					Acquisition acquisition = new Acquisition("g" + sequence, limit, key, cost);
					RedisRateLimitStore store = random.nextBoolean() ? this.store : this.single;
					Receipt receipt = store.admitAll(List.of(acquisition)).get(0);
					history.add("t=" + micros + " admit " + describe(acquisition) + " -> " + receipt);
					if (receipt.holdsCost()) {
						assertThat(receipt.place()).isEqualTo(Receipt.Place.STORE);
						assertThat(GiveBack.markOf(algorithm, state(acquisition))).as("the mark of %s", receipt)
							.isEqualTo(receipt.mark());
						held.add(receipt);
						seen.merge("admitted", 1, Integer::sum);
					}
					else {
						// Rejected by Redis: decided there, holding nothing.
						assertThat(receipt.decision().isAllowed()).isFalse();
						assertThat(receipt.place()).isEqualTo(Receipt.Place.STORE);
					}
				}
				else if (op < 9 && !held.isEmpty()) {
					Receipt receipt = held.remove(random.nextInt(held.size()));
					Acquisition acquisition = receipt.acquisition();
					Object before = state(acquisition);
					GiveBack expected = GiveBack.of(algorithm, before, micros, acquisition.limit(), acquisition.cost(),
							receipt.mark());
					RedisRateLimitStore store = random.nextBoolean() ? this.store : this.single;
					long given = store.giveBacks.inRedis(receipt).join();
					String what = "t=" + micros + " give back " + receipt + " from " + before;
					history.add(what + " -> " + given);
					if (given != expected.given() || !java.util.Objects.equals(state(acquisition), expected.state())) {
						fail("Sequence " + sequence + " of " + algorithm + " " + plans + " disagrees at step " + step + ": "
								+ what + "\n  java:  " + expected + "\n  redis: " + given + " " + state(acquisition)
								+ "\nhistory:\n  "
								+ String.join("\n  ", history.subList(Math.max(0, history.size() - 15), history.size())));
					}
					seen.merge((given > 0) ? "given" : "nothingHeld", 1, Integer::sum);
					if (!acquisition.limit().equals(limit)) {
						seen.merge("otherPlan", 1, Integer::sum);
					}
					if (given > 0 && given < acquisition.cost() * ((algorithm.hasBurst() ? acquisition.limit().emissionIntervalNanos() / 1000 : 1))) {
						seen.merge("partly", 1, Integer::sum);
					}
				}
				else {
					// Another request, which moves the state to its limit when that changed.
					Acquisition other = new Acquisition("g" + sequence, limit, key, 1);
					history.add("t=" + micros + " acquire " + describe(other) + " -> " + this.single.tryAcquire(other));
				}
			}
		}
		assertThat(seen).containsKeys("admitted", "given", "nothingHeld", "otherPlan");
		if (algorithm.hasBurst()) {
			assertThat(seen).containsKey("partly");
		}
	}

	/** Nothing is given back of a fixed window that has ended, even to the next window of the same key. */
	@Test
	void aFixedWindowThatRolledOverHoldsNothing() {
		Limit limit = Limit.builder().algorithm(Algorithm.FIXED_WINDOW).limit(3).period(Duration.ofSeconds(1)).build();
		this.now.set(1_767_225_600_000_000L);
		Receipt receipt = this.single.admitAll(List.of(new Acquisition("fw", limit, "k", 2))).get(0);
		this.now.addAndGet(1_000_000);
		assertThat(this.single.tryAcquire(new Acquisition("fw", limit, "k", 3)).isAllowed()).isTrue();
		Object before = state(receipt.acquisition());
		assertThat(this.single.giveBacks.inRedis(receipt).join()).isZero();
		assertThat(state(receipt.acquisition())).isEqualTo(before);
		assertThat(this.single.tryAcquire(new Acquisition("fw", limit, "k", 1)).isAllowed()).isFalse();
	}

	/** A log gives back the attempt's own entries, not the newer ones of another request. */
	@Test
	void aLogGivesBackItsOwnEntriesNotAnotherRequests() {
		Limit limit = Limit.builder().algorithm(Algorithm.SLIDING_WINDOW_LOG).limit(4).period(Duration.ofSeconds(10)).build();
		long start = 1_767_225_600_000_000L;
		this.now.set(start);
		Receipt mine = this.single.admitAll(List.of(new Acquisition("log", limit, "k", 2))).get(0);
		this.now.set(start + 3_000_000);
		assertThat(this.single.tryAcquire(new Acquisition("log", limit, "k", 2)).isAllowed()).isTrue();
		assertThat(mine.mark()).isEqualTo(start);
		assertThat(this.single.giveBacks.inRedis(mine).join()).isEqualTo(2);
		String key = this.store.redisKey("log", "k");
		assertThat(redis.commands().lrange(key, 0, -1)).containsExactly(Long.toString(start + 3_000_000),
				Long.toString(start + 3_000_000));
		// Given back twice: nothing more.
		assertThat(this.single.giveBacks.inRedis(mine).join()).isZero();
	}

	/**
	 * A bucket gives back only the part of the step that refill has not restored yet, a cost above 1 as
	 * well, and under a changed limit that part scaled to the interval in force.
	 */
	@Test
	void aBucketGivesBackWhatRefillHasNotRestored() {
		Limit limit = Limit.builder().limit(4).period(Duration.ofSeconds(4)).build();
		String key = this.store.redisKey("tb", "k");
		long start = 1_767_225_600_000_000L;
		this.now.set(start);
		Receipt receipt = this.single.admitAll(List.of(new Acquisition("tb", limit, "k", 3))).get(0);
		assertThat(receipt.mark()).isEqualTo(start + 3_000_000);
		this.now.set(start + 500_000);
		assertThat(this.single.tryAcquire(new Acquisition("tb", limit, "k", 1)).isAllowed()).isTrue();
		this.now.set(start + 1_250_000);
		// 1.25 s of the 3 s step refilled: 1.75 s held; the other request's second stays taken.
		assertThat(this.single.giveBacks.inRedis(receipt).join()).isEqualTo(1_750_000);
		assertThat(redis.commands().get(key)).isEqualTo((start + 2_250_000) + " 1000000");
		this.now.set(start + 2_000_000);
		Receipt second = this.single.admitAll(List.of(new Acquisition("tb", limit, "k", 2))).get(0);
		assertThat(second.mark()).isEqualTo(start + 4_250_000);
		// Twice the rate since (interval 0.5 s): 2.25 s spent become 1.125 s, then 0.5 s more.
		Limit faster = Limit.builder().limit(8).period(Duration.ofSeconds(4)).build();
		assertThat(this.single.tryAcquire(new Acquisition("tb", faster, "k", 1)).isAllowed()).isTrue();
		assertThat(redis.commands().get(key)).isEqualTo((start + 3_625_000) + " 500000");
		this.now.set(start + 2_500_000);
		// 1.75 s of the 2 s step held under 1 s per token, 0.875 s under 0.5 s; the state keeps its interval.
		assertThat(this.single.giveBacks.inRedis(second).join()).isEqualTo(875_000);
		assertThat(redis.commands().get(key)).isEqualTo((start + 2_750_000) + " 500000");
	}

	/** A window counter gives back from the window the attempt was counted in, the previous one once rolled. */
	@Test
	void aWindowCounterGivesBackFromTheAttemptsWindow() {
		Limit limit = Limit.builder().algorithm(Algorithm.SLIDING_WINDOW_COUNTER).limit(5).period(Duration.ofSeconds(1)).build();
		long start = 1_767_225_600_000_000L;
		this.now.set(start + 400_000);
		Receipt receipt = this.single.admitAll(List.of(new Acquisition("swc", limit, "k", 3))).get(0);
		assertThat(receipt.mark()).isEqualTo(start);
		this.now.set(start + 1_200_000);
		assertThat(this.single.tryAcquire(new Acquisition("swc", limit, "k", 1)).isAllowed()).isTrue();
		assertThat(this.single.giveBacks.inRedis(receipt).join()).isEqualTo(3);
		assertThat(redis.commands().get(this.store.redisKey("swc", "k"))).isEqualTo((start + 1_000_000) + " 1 0 1000000");
		this.now.set(start + 2_100_000);
		Receipt late = this.single.admitAll(List.of(new Acquisition("swc", limit, "k", 1))).get(0);
		this.now.set(start + 4_100_000);
		assertThat(this.single.giveBacks.inRedis(late).join()).isZero();
	}

	private Object state(Acquisition acquisition) {
		String key = this.store.redisKey(acquisition.limitId(), acquisition.key());
		if (acquisition.limit().algorithm() == Algorithm.SLIDING_WINDOW_LOG) {
			List<String> entries = redis.commands().lrange(key, 0, -1);
			return entries.isEmpty() ? null : entries;
		}
		return redis.commands().get(key);
	}

	/** Another limit of the same algorithm: another interval, or another period. */
	private static Limit otherPlan(Limit first, Random random) {
		Limit.Builder other = Limit.builder().algorithm(first.algorithm());
		long limit = 1 + random.nextInt(12);
		long step = first.period().toNanos() / first.limit();
		return switch (random.nextInt(3)) {
			case 0 -> other.limit(limit).period(first.period()).build();
			case 1 -> other.limit(limit).period(Duration.ofNanos(limit * step * (1 + random.nextInt(3)))).build();
			default -> other.limit(limit).period(Duration.ofNanos(limit * (1 + random.nextInt(5_000_000)) * 1000)).build();
		};
	}

	/**
	 * The give-back of a receipt, as the in-process store defines it (in nanoseconds there), on a Redis state
	 * as the scripts hold it (microseconds): what a give-back at {@code now} leaves and what it gives back.
	 * @param given tokens, or a bucket's microseconds
	 * @param state the state afterwards: a string, a log's entries, or {@code null} for no key
	 */
	record GiveBack(long given, Object state) {

		static GiveBack of(Algorithm algorithm, Object state, long now, Limit limit, long cost, long mark) {
			if (state == null) {
				// A missing key is fresh: nothing is held, and no key is created.
				return new GiveBack(0, null);
			}
			return switch (algorithm) {
				case TOKEN_BUCKET, LEAKY_BUCKET -> gcra((String) state, now, limit, cost, mark);
				case FIXED_WINDOW -> fixedWindow((String) state, now, limit, cost, mark);
				case SLIDING_WINDOW_LOG -> log(uncheckedList(state), now, limit, cost, mark);
				case SLIDING_WINDOW_COUNTER -> counter((String) state, now, limit, cost, mark);
				case CONCURRENCY -> new GiveBack(0, state);
			};
		}

		/** Where an admission's cost sits in the state it left: the mark its receipt must carry. */
		static long markOf(Algorithm algorithm, Object state) {
			return switch (algorithm) {
				case TOKEN_BUCKET, LEAKY_BUCKET -> Long.parseLong(((String) state).split(" ")[0]);
				case FIXED_WINDOW -> Long.parseLong(((String) state).split(" ")[2]);
				case SLIDING_WINDOW_LOG -> Long.parseLong(uncheckedList(state).get(uncheckedList(state).size() - 1));
				case SLIDING_WINDOW_COUNTER -> Long.parseLong(((String) state).split(" ")[0]);
				case CONCURRENCY -> Receipt.NO_MARK;
			};
		}

		private static GiveBack gcra(String state, long now, Limit limit, long cost, long mark) {
			// Rounded up to the microsecond, as the store sends it.
			long receiptInterval = -Math.floorDiv(-limit.emissionIntervalNanos(), 1000);
			String[] parts = state.split(" ");
			long tat = Long.parseLong(parts[0]);
			long interval = (parts.length > 1) ? Long.parseLong(parts[1]) : receiptInterval;
			long held = Math.min(Math.max(mark - now, 0), cost * receiptInterval);
			if (interval != receiptInterval) {
				held = Math.floorDiv(held * interval, receiptInterval);
			}
			long newTat = Math.max(tat - held, now);
			if (newTat >= tat) {
				return new GiveBack(0, state);
			}
			return new GiveBack(tat - newTat, (newTat > now) ? newTat + " " + interval : null);
		}

		private static GiveBack fixedWindow(String state, long now, Limit limit, long cost, long mark) {
			String[] parts = state.split(" ");
			long start = Long.parseLong(parts[0]);
			long count = Long.parseLong(parts[1]);
			long end = (parts.length > 2) ? Long.parseLong(parts[2]) : start + limit.period().toNanos() / 1000;
			if (end != mark || now >= end) {
				return new GiveBack(0, state);
			}
			long given = Math.min(cost, count);
			return new GiveBack(given, (count - given > 0) ? start + " " + (count - given) + " " + end : null);
		}

		private static GiveBack log(List<String> entries, long now, Limit limit, long cost, long mark) {
			if (mark <= now - limit.period().toNanos() / 1000) {
				// Aged out of the window: held nothing any more, whether or not the list still has it.
				return new GiveBack(0, entries);
			}
			List<String> left = new ArrayList<>(entries);
			long given = 0;
			while (given < cost && left.remove(Long.toString(mark))) {
				given++;
			}
			return new GiveBack(given, left.isEmpty() ? null : left);
		}

		private static GiveBack counter(String state, long now, Limit limit, long cost, long mark) {
			String[] parts = state.split(" ");
			long period = (parts.length > 3) ? Long.parseLong(parts[3]) : limit.period().toNanos() / 1000;
			long start = Long.parseLong(parts[0]);
			long current = Long.parseLong(parts[1]);
			long previous = Long.parseLong(parts[2]);
			long windowStart = Math.floorDiv(now, period) * period;
			if (windowStart > start) {
				previous = (windowStart == start + period) ? current : 0;
				current = 0;
				start = windowStart;
			}
			long given = 0;
			if (start == mark) {
				given = Math.min(cost, current);
				current -= given;
			}
			else if (start == mark + period) {
				given = Math.min(cost, previous);
				previous -= given;
			}
			if (given == 0) {
				return new GiveBack(0, state);
			}
			long left = (current > 0) ? start + 2 * period - now : (previous > 0) ? start + period - now : 0;
			return new GiveBack(given, (left > 0) ? start + " " + current + " " + previous + " " + period : null);
		}

		@SuppressWarnings("unchecked")
		private static List<String> uncheckedList(Object state) {
			return (List<String>) state;
		}
	}

	/** When set, the first limit id alternates at random between these limits. */
	private List<Limit> plans = List.of();

	private void run(List<Limit> limits, Random random, int sequence) {
		String algorithm = limits.stream().map((limit) -> limit.algorithm().id()).distinct().toList().toString();
		List<String> keys = List.of("a", "b", "c");
		JavaStore java = new JavaStore();
		long startMicros = 1_767_225_600_000_000L + random.nextInt(1_000_000_000);
		long micros = startMicros;
		Map<String, Expiry> expiries = new HashMap<>();
		List<String> history = new ArrayList<>();
		// Acquisitions go through the coalesced (batch) path or the single-call path at random, each with its
		// reply forms (a bucket's single acquisition answered in one compact integer): a random of its own, so
		// that the sequences stay those of the seeds.
		Random paths = new Random(sequence);
		for (int step = 0; step < STEPS; step++) {
			micros += advance(random, limits.get(random.nextInt(limits.size())));
			this.now.set(micros);
			java.nowNanos = micros * 1000;
			expire(expiries, java, micros, history);
			int op = random.nextInt(10);
			List<Acquisition> acquisitions = new ArrayList<>();
			int count = (op < 2) ? 2 + random.nextInt(2) : 1;
			for (int i = 0; i < count; i++) {
				int which = (count > 1) ? i % limits.size() : random.nextInt(limits.size());
				Limit limit = limits.get(which);
				if (which == 0 && !this.plans.isEmpty()) {
					limit = this.plans.get(random.nextInt(this.plans.size()));
				}
				long cost = 1 + ((random.nextInt(4) == 0) ? random.nextInt((int) limit.burst()) : 0);
				long maxWait = (random.nextInt(4) == 0) ? random.nextLong(limit.period().toNanos() / 1000 + 1) * 1000 : 0;
				acquisitions.add(new Acquisition("s" + sequence + "-limit-" + which, limit, keys.get(random.nextInt(keys.size())), cost,
						maxWait));
			}
			List<Decision> expected;
			List<Decision> actual;
			String what;
			long callStart = System.nanoTime();
			if (op == 7 || (op == 1 && random.nextBoolean())) {
				what = "check " + acquisitions.stream().map(ScriptAgreementTests::describe).toList();
				int movesBefore = java.moves;
				expected = acquisitions.stream()
					.map((acquisition) -> java.state(acquisition).check(java.nowNanos, acquisition.cost()))
					.toList();
				List<String> before = dumps(acquisitions);
				actual = (count > 1) ? this.store.checkAll(acquisitions) : List.of(this.store.check(acquisitions.get(0)));
				// A check writes back only a move to a changed limit, and a log's trim (which changes no decision).
				if (java.moves == movesBefore && !algorithm.contains(Algorithm.SLIDING_WINDOW_LOG.id())) {
					assertThat(dumps(acquisitions)).as("a check writes nothing").isEqualTo(before);
				}
				op = -1;
			}
			else if (op == 8 && random.nextBoolean()) {
				what = "peek " + describe(acquisitions.get(0));
				expected = List.of(java.state(acquisitions.get(0)).peek(java.nowNanos));
				actual = List.of(this.store.peek(acquisitions.get(0)));
			}
			else if (op == 9) {
				what = "release " + describe(acquisitions.get(0));
				expected = List.of(java.release(acquisitions.get(0)));
				actual = List.of(this.store.release(acquisitions.get(0)));
			}
			else if (count > 1) {
				RedisRateLimitStore store = paths.nextBoolean() ? this.store : this.single;
				what = "acquireAll " + acquisitions.stream().map(ScriptAgreementTests::describe).toList()
						+ ((store == this.single) ? " (single call)" : " (coalesced)");
				expected = java.tryAcquireAll(acquisitions);
				actual = store.tryAcquireAll(acquisitions);
			}
			else {
				RedisRateLimitStore store = paths.nextBoolean() ? this.store : this.single;
				what = "acquire " + describe(acquisitions.get(0)) + ((store == this.single) ? " (single call)" : " (coalesced)");
				expected = List.of(java.tryAcquire(acquisitions.get(0)));
				actual = List.of(store.tryAcquire(acquisitions.get(0)));
			}
			if (java.moves > 0) {
				this.outcomes.merge("moved", java.moves, Integer::sum);
				java.moves = 0;
			}
			history.add("t=" + (micros - startMicros) + "us " + what + " -> " + expected);
			count(op, expected);
			if (!actual.equals(expected)) {
				fail("Sequence " + sequence + " of " + algorithm + " " + limits + " disagrees at step " + step + ": " + what
						+ "\n  java:  " + expected + "\n  redis: " + actual + "\nhistory:\n  "
						+ String.join("\n  ", history.subList(Math.max(0, history.size() - 15), history.size())));
			}
			for (Acquisition acquisition : acquisitions) {
				String key = this.store.redisKey(acquisition.limitId(), acquisition.key());
				long ttl = redis.commands().pttl(key);
				assertThat(ttl).as("TTL of %s", key).isNotEqualTo(-1L);
				byte[] value = redis.binaryCommands().dump(key.getBytes(StandardCharsets.UTF_8));
				Expiry previous = expiries.get(key);
				if (ttl == -2) {
					expiries.remove(key);
				}
				else if (previous == null || !Arrays.equals(previous.value(), value) || ttl > previous.ttl()) {
					// Written now, or its TTL extended (a log under a longer period than it was written with):
					// Written now: Redis would expire the key TTL milliseconds after the script ran (less
					// the test's hour), which was at most `slack` ago; the test expires it then, in test time.
					long slack = (System.nanoTime() - callStart) / 1_000_000 + 1;
					expiries.put(key,
							new Expiry(acquisition, micros + (ttl - TEST_TTL_OFFSET + slack) * 1000, value, ttl));
				}
			}
		}
	}

	/**
	 * Expires the keys whose TTL has passed in test time (the test persists keys, so that Redis, whose
	 * clock is real, does not). A key may expire only when its state equals a fresh one.
	 */
	private void expire(Map<String, Expiry> expiries, JavaStore java, long micros, List<String> history) {
		expiries.entrySet().removeIf((entry) -> {
			Expiry expiry = entry.getValue();
			if (expiry.atMicros() > micros) {
				return false;
			}
			Acquisition acquisition = expiry.acquisition();
			BareState held = java.held(acquisition);
			Decision state = held.peek(micros * 1000);
			Decision fresh = BareState.of(held.limit()).peek(micros * 1000);
			if (!state.equals(fresh)) {
				fail("Key " + entry.getKey() + " expired while its state was not fresh: " + state + "\nhistory:\n  "
						+ String.join("\n  ", history.subList(Math.max(0, history.size() - 15), history.size())));
			}
			redis.commands().del(entry.getKey());
			this.outcomes.merge("expired", 1, Integer::sum);
			return true;
		});
	}

	/** Each key's serialized value and expiry time (Redis 7's PEXPIRETIME), as text. */
	private List<String> dumps(List<Acquisition> acquisitions) {
		List<String> dumps = new ArrayList<>();
		for (Acquisition acquisition : acquisitions) {
			String key = this.store.redisKey(acquisition.limitId(), acquisition.key());
			byte[] value = redis.binaryCommands().dump(key.getBytes(StandardCharsets.UTF_8));
			dumps.add(Arrays.toString(value) + " expires at " + redis.commands().pexpiretime(key));
		}
		return dumps;
	}

	private record Expiry(Acquisition acquisition, long atMicros, byte[] value, long ttl) {
	}

	private void count(int op, List<Decision> decisions) {
		boolean rejected = decisions.stream().anyMatch((decision) -> !decision.isAllowed());
		String outcome = (op == -1) ? (rejected ? "checkRejected" : "checkAllowed") : (op == 9) ? "released" : (op == 8) ? "peeked" : (decisions.size() > 1 && rejected) ? "rejectedAll"
				: rejected ? "rejected" : decisions.stream().anyMatch((decision) -> decision.waitNanos() > 0) ? "delayed"
						: "allowed";
		this.outcomes.merge(outcome, 1, Integer::sum);
	}

	private static long advance(Random random, Limit limit) {
		long intervalMicros = limit.emissionIntervalNanos() / 1000;
		return switch (random.nextInt(6)) {
			case 0, 1 -> 0;
			case 2 -> random.nextLong(intervalMicros + 1);
			case 3 -> random.nextLong(3 * intervalMicros + 1);
			case 4 -> random.nextLong(limit.period().toNanos() / 1000 + 1);
			default -> random.nextLong(2 * limit.period().toNanos() / 1000 + 1);
		};
	}

	/**
	 * A limit whose period and emission interval are whole microseconds, so that the Java algorithm
	 * (nanoseconds) and the script (microseconds) compute with the same numbers.
	 */
	private static Limit randomLimit(Algorithm algorithm, Random random) {
		long limit = 1 + random.nextInt(12);
		boolean burst = algorithm.hasBurst() && random.nextBoolean();
		long intervalMicros = switch (random.nextInt(4)) {
			case 0 -> 1 + random.nextInt(50);
			case 1 -> 1_000 + random.nextInt(100_000);
			case 2 -> 1_000_000;
			default -> 1 + random.nextInt(5_000_000);
		};
		Limit.Builder builder = Limit.builder()
			.algorithm(algorithm)
			.limit(limit)
			.period(Duration.ofNanos(limit * intervalMicros * 1000));
		if (burst) {
			builder.burst(1 + random.nextInt((int) limit * 3));
		}
		return builder.build();
	}

	private static String describe(Acquisition acquisition) {
		return acquisition.limitId() + "/" + acquisition.key() + " cost=" + acquisition.cost()
				+ ((acquisition.maxWaitNanos() > 0) ? " maxWait=" + acquisition.maxWaitNanos() + "ns" : "");
	}

	/**
	 * The Java algorithms at a given time, with the SPI's default all-or-nothing acquisition.
	 */
	private static final class JavaStore implements RateLimitStore {

		private final Map<String, BareState> states = new HashMap<>();

		private long nowNanos;

		@Override
		public Decision tryAcquire(Acquisition acquisition) {
			return state(acquisition).tryAcquire(this.nowNanos, acquisition.cost(), acquisition.maxWaitNanos());
		}

		@Override
		public Decision release(Acquisition acquisition) {
			return state(acquisition).release(this.nowNanos, acquisition.cost());
		}

		@Override
		public Decision peek(Acquisition acquisition) {
			return state(acquisition).peek(this.nowNanos);
		}

		@Override
		public void reset(String limitId, String key) {
			this.states.remove(limitId + "\n" + key);
		}

		int moves;

		/** The state as it is, without moving it to the acquisition's limit. */
		BareState held(Acquisition acquisition) {
			return this.states.computeIfAbsent(acquisition.limitId() + "\n" + acquisition.key(),
					(k) -> BareState.of(acquisition.limit()));
		}

		BareState state(Acquisition acquisition) {
			BareState state = this.states.computeIfAbsent(acquisition.limitId() + "\n" + acquisition.key(),
					(k) -> BareState.of(acquisition.limit()));
			if (!state.limit().equals(acquisition.limit())) {
				state = state.moveTo(acquisition.limit(), this.nowNanos);
				this.states.put(acquisition.limitId() + "\n" + acquisition.key(), state);
				this.moves++;
			}
			return state;
		}
	}
}
