package io.github.ratelimit.redis.it;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import io.github.ratelimit.redis.TestRedisCluster;

/**
 * Two application instances on a real three-master Redis Cluster enforce one budget through HTTP; a
 * request with two policies (keys in different slots) is acquired with compensation; runtime changes of
 * a policy and resets reach every instance.
 */
@ExtendWith(OutputCaptureExtension.class)
class ClusterEndToEndTests {

	private static TestRedisCluster cluster;

	@BeforeAll
	static void startCluster() {
		cluster = TestRedisCluster.shared();
	}

	@Test
	void twoInstancesShareOneBudget() {
		SharedBudgetTests.twoInstancesShareOneBudget("spring.data.redis.cluster.nodes=" + cluster.nodes());
	}

	@Test
	void aRuntimeChangeOnOneInstanceReachesTheOther(CapturedOutput output) {
		SharedOverrides.aChangeOnOneInstanceReachesTheOther(output, "spring.data.redis.cluster.nodes=" + cluster.nodes());
	}

	@Test
	void aResetOnOneInstanceDropsTheRejectionKeptByTheOther() {
		SharedOverrides.aResetOnOneInstanceDropsTheRejectionKeptByTheOther(
				"spring.data.redis.cluster.nodes=" + cluster.nodes());
	}

	@Test
	void twoInstancesShareTheSlotsOfAConcurrencyLimit() throws Exception {
		SharedSlotsTests.twoInstancesShareTheSlots("spring.data.redis.cluster.nodes=" + cluster.nodes());
	}
}
