package io.github.ratelimit.redis.it;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.github.ratelimit.redis.TestRedisCluster;

/**
 * Two application instances on a real three-master Redis Cluster enforce one budget through HTTP; a
 * request with two policies (keys in different slots) is acquired with compensation.
 */
class ClusterEndToEndTests {

	private static TestRedisCluster cluster;

	@BeforeAll
	static void startCluster() {
		cluster = TestRedisCluster.start();
	}

	@AfterAll
	static void stopCluster() {
		if (cluster != null) {
			cluster.close();
		}
	}

	@Test
	void twoInstancesShareOneBudget() {
		SharedBudgetTests.twoInstancesShareOneBudget("spring.data.redis.cluster.nodes=" + cluster.nodes());
	}

	@Test
	void twoInstancesShareTheSlotsOfAConcurrencyLimit() throws Exception {
		SharedSlotsTests.twoInstancesShareTheSlots("spring.data.redis.cluster.nodes=" + cluster.nodes());
	}
}
