package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.Decision;
import io.github.ratelimit.core.Limit;
import io.github.ratelimit.core.OnFailure;

import io.github.ratelimit.testsupport.RedisProcess;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One master of a real three-master Redis Cluster killed: with {@code cluster-require-full-coverage
 * no}, only that master's keys are decided by on-failure (at once after the first failures), the
 * healthy masters keep deciding exactly, and the dead node's transition is logged once, with its
 * name; with full coverage required, the cluster answers {@code CLUSTERDOWN} and every key is decided
 * by on-failure at once. Latencies are printed, not asserted: a breaker whose clock stands still (no
 * probe) shows by its error count that no later request asked Redis, hence none paid the timeout.
 */
@ExtendWith(OutputCaptureExtension.class)
class ClusterNodeFailureTests {

	/** Long enough that a loaded machine's healthy master answers in time; only the first calls to a dead one wait it. */
	private static final Duration TIMEOUT = Duration.ofMillis(500);

	private static final Limit LIMIT = Limit.builder().limit(10).period(Duration.ofHours(1)).build();

	private TestRedisCluster cluster;

	private LettuceConnectionFactory factory;

	private RedisRateLimitStore store;

	/** The breakers' clock: still, but for the warm-up. */
	private final AtomicLong breakerNanos = new AtomicLong();

	@AfterEach
	void stop() {
		if (this.store != null) {
			this.store.close();
		}
		if (this.factory != null) {
			this.factory.destroy();
		}
		if (this.cluster != null) {
			this.cluster.close();
		}
	}

	private RedisRateLimitStore start(String fullCoverage) {
		this.cluster = TestRedisCluster.start("--cluster-require-full-coverage", fullCoverage);
		this.factory = this.cluster.connectionFactory();
		this.store = RedisRateLimitStore.builder(this.factory)
			.timeout(TIMEOUT)
			.onFailure(OnFailure.DENY)
			.breaker(3, Duration.ofSeconds(1))
			.breakerClock(this.breakerNanos::get)
			.build();
		return this.store;
	}

	/** Connects to the master of each acquisition (Lettuce connects to each node at its first call). */
	private void warmUp(Acquisition... acquisitions) {
		for (Acquisition acquisition : acquisitions) {
			long errors = this.store.errors();
			for (int i = 0; i < 50; i++) {
				try {
					this.store.peek(acquisition);
				}
				catch (IllegalStateException ex) {
					// Not connected yet: counted as an error, tried again.
				}
				if (this.store.errors() == errors) {
					break;
				}
				// A breaker the warm-up opened lets a probe through.
				this.breakerNanos.addAndGet(Duration.ofSeconds(1).toNanos());
				errors = this.store.errors();
			}
		}
	}

	/** A key of the policy {@code api} whose Redis key lives on (or not on) the given master. */
	private String key(int port, boolean on) {
		for (int i = 0;; i++) {
			String key = "k" + i;
			if ((this.cluster.portOf(this.store.redisKey("api", key)) == port) == on) {
				return key;
			}
		}
	}

	@Test
	void aDeadMasterCostsOnlyItsKeys(CapturedOutput output) {
		RedisRateLimitStore store = start("no");
		int dead = Integer.parseInt(this.cluster.nodes().split(",")[0].split(":")[1]);
		Acquisition onDead = new Acquisition("api", LIMIT, key(dead, true), 1);
		Acquisition onHealthy = new Acquisition("api", LIMIT, key(dead, false), 1);
		int healthy = this.cluster.portOf(store.redisKey("api", onHealthy.key()));
		Set<String> nodes = ConcurrentHashMap.newKeySet();
		store.onNode(nodes::add);
		warmUp(onDead, onHealthy);
		assertThat(store.tryAcquire(onDead).remaining()).isEqualTo(9);
		assertThat(store.tryAcquire(onHealthy).remaining()).isEqualTo(9);
		assertThat(nodes).contains("127.0.0.1:" + dead, "127.0.0.1:" + healthy);

		this.cluster.kill(dead);
		List<Long> deadMillis = new ArrayList<>();
		List<Decision> healthyDecisions = new ArrayList<>();
		for (int i = 0; i < 40; i++) {
			long start = System.nanoTime();
			Decision decision = store.tryAcquire(onDead);
			deadMillis.add((System.nanoTime() - start) / 1_000_000);
			assertThat(decision.isAllowed()).as("decided by on-failure=deny").isFalse();
			healthyDecisions.add(store.tryAcquire(onHealthy));
		}
		System.out.println("Decisions for the dead master's key (ms): " + deadMillis);
		// 3 failures open the dead node's breaker; the breakers' clock stands still, so no probe follows: every
		// later call was decided at once, without asking Redis (each would have been an error).
		// The healthy master decides exactly: 9 tokens were left, then Redis rejects (not on-failure's 1 s).
		assertThat(healthyDecisions.subList(0, 9)).allMatch(Decision::isAllowed);
		assertThat(healthyDecisions.subList(9, 40)).noneMatch(Decision::isAllowed)
			.allMatch((decision) -> decision.retryAfterNanos() > Duration.ofMinutes(1).toNanos());
		assertThat(store.isAvailable("127.0.0.1:" + dead)).isFalse();
		assertThat(store.isAvailable("127.0.0.1:" + healthy)).isTrue();
		assertThat(store.errors("127.0.0.1:" + dead)).isEqualTo(3);
		assertThat(store.errors("127.0.0.1:" + healthy)).isZero();
		assertThat(output).containsOnlyOnce("Redis rate limit store failed on 127.0.0.1:" + dead)
			.doesNotContain("failed on 127.0.0.1:" + healthy)
			.doesNotContain("answers again on");
	}

	@Test
	void withFullCoverageRequiredClusterDownDecidesEveryKeyAtOnce(CapturedOutput output) {
		RedisRateLimitStore store = start("yes");
		int dead = Integer.parseInt(this.cluster.nodes().split(",")[0].split(":")[1]);
		Acquisition onHealthy = new Acquisition("api", LIMIT, key(dead, false), 1);
		int healthy = this.cluster.portOf(store.redisKey("api", onHealthy.key()));
		warmUp(onHealthy);
		assertThat(store.tryAcquire(onHealthy).remaining()).isEqualTo(9);
		this.cluster.configSet("cluster-node-timeout", "500");
		this.cluster.kill(dead);
		long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
		while (!this.cluster.info().contains("cluster_state:fail") && System.nanoTime() < deadline) {
			RedisProcess.sleep(50);
		}
		assertThat(this.cluster.info()).contains("cluster_state:fail");
		long errors = store.errors("127.0.0.1:" + healthy);
		List<Long> millis = new ArrayList<>();
		for (int i = 0; i < 20; i++) {
			long start = System.nanoTime();
			Decision decision = store.tryAcquire(onHealthy);
			millis.add((System.nanoTime() - start) / 1_000_000);
			assertThat(decision.isAllowed()).as("decided by on-failure=deny").isFalse();
			assertThat(decision.retryAfterNanos()).isEqualTo(Duration.ofSeconds(1).toNanos());
		}
		System.out.println("Decisions for a healthy master's key, cluster down (ms): " + millis);
		// CLUSTERDOWN is answered at once, and counts as an outage: the node's breaker opens.
		assertThat(store.errors("127.0.0.1:" + healthy) - errors).isEqualTo(3);
		assertThat(store.isAvailable("127.0.0.1:" + healthy)).isFalse();
		assertThat(output).containsOnlyOnce("Redis rate limit store failed on 127.0.0.1:" + healthy + " (CLUSTERDOWN");
	}
}
