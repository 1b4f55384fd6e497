package io.github.ratelimit.web.policy;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.RateLimitConfigurationException;
import io.github.ratelimit.core.SharedPolicyOverrides;
import io.github.ratelimit.web.CountMode;
import io.github.ratelimit.web.OnLimit;
import io.github.ratelimit.web.clientip.ClientIpResolver;
import io.github.ratelimit.web.key.KeyResolvers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Edges of runtime changes shared between instances: the stored format, a store that refuses, values
 * edited by hand, a refresh under an override. End to end (two instances on a real Redis) in the Redis
 * module's {@code RuntimeOverridesTests}.
 */
@ExtendWith(OutputCaptureExtension.class)
class RateLimitPoliciesTests {

	private final KeyResolvers keyResolvers = new KeyResolvers(ClientIpResolver.builder().build(), null);

	@Test
	void theStoredFormatReadsBackEveryValue() {
		Map<String, RateLimitPolicy.Plan> plans = new LinkedHashMap<>();
		plans.put("pro \"gold\"", new RateLimitPolicy.Plan(100L, Duration.ofMinutes(1), null));
		plans.put("free", new RateLimitPolicy.Plan(null, null, 3L));
		RateLimitPolicy.Change change = new RateLimitPolicy.Change(4L, Duration.ofHours(1), 8L, plans);
		String written = OverrideFormat.write(change);
		assertThat(written).isEqualTo("{\"limit\":4,\"period\":\"PT1H\",\"burst\":8,\"plans\":{\"pro \\\"gold\\\"\":"
				+ "{\"limit\":100,\"period\":\"PT1M\"},\"free\":{\"burst\":3}}}");
		assertThat(OverrideFormat.read(written, "rate-limit.policies.api")).isEqualTo(change);
		RateLimitPolicy.Change limitOnly = new RateLimitPolicy.Change(4L, null, null, null);
		assertThat(OverrideFormat.read(OverrideFormat.write(limitOnly), "p")).isEqualTo(limitOnly);
	}

	@Test
	void aStoredValueThatCannotBeReadNamesItsProperty() {
		assertThatExceptionOfType(RateLimitConfigurationException.class)
			.isThrownBy(() -> OverrideFormat.read("{\"limit\":\"many\"}", "rate-limit.policies.api"))
			.satisfies((ex) -> assertThat(ex.getOrigin()).isEqualTo("rate-limit.policies.api.limit"));
		assertThatExceptionOfType(RateLimitConfigurationException.class)
			.isThrownBy(() -> OverrideFormat.read("{\"plans\":{\"pro\":{\"period\":\"soon\"}}}", "rate-limit.policies.api"))
			.satisfies((ex) -> assertThat(ex.getOrigin()).isEqualTo("rate-limit.policies.api.plans.pro.period"));
		assertThatExceptionOfType(RateLimitConfigurationException.class)
			.isThrownBy(() -> OverrideFormat.read("not json", "rate-limit.policies.api"));
	}

	@Test
	void anOverrideFoundAtStartUpIsAppliedAndWarned(CapturedOutput output) {
		RateLimitPolicies policies = policies();
		InMemory shared = new InMemory();
		shared.values.put("api", "{\"limit\":4}");
		shared.values.put("gone", "{\"limit\":4}");
		policies.shareThrough(shared);
		assertThat(policies.get("api").limit().limit()).isEqualTo(4);
		assertThat(output).contains("Rate limit policy 'api' is changed by an override kept in the shared store: "
				+ "token-bucket(limit=4, period=PT1H, burst=4) instead of the configured token-bucket(limit=2, "
				+ "period=PT1H, burst=2)");
		// The same values again (another instance's poll): nothing to do, nothing logged.
		shared.publish();
		assertThat(output.toString().split("changed on another instance", -1)).hasSize(1);
		shared.values.remove("api");
		shared.publish();
		assertThat(policies.get("api").isOverridden()).isFalse();
		assertThat(output).contains("Rate limit policy 'api' restored on another instance from token-bucket(limit=4, "
				+ "period=PT1H, burst=4) to its configured token-bucket(limit=2, period=PT1H, burst=2)");
	}

	@Test
	void anOverrideEditedByHandThatIsWrongIsLoggedAndNotApplied(CapturedOutput output) {
		RateLimitPolicies policies = policies();
		InMemory shared = new InMemory();
		policies.shareThrough(shared);
		shared.values.put("api", "{\"limit\":0}");
		shared.publish();
		assertThat(policies.get("api").limit().limit()).isEqualTo(2);
		assertThat(output).contains("Rate limit policy 'api': the override kept in the shared store ({\"limit\":0}) "
				+ "cannot be applied").contains("limit must be positive, was 0");
	}

	@Test
	void aChangeTheSharedStoreRefusesIsUndone() {
		RateLimitPolicies policies = policies();
		InMemory shared = new InMemory();
		policies.shareThrough(shared);
		shared.refuse = true;
		assertThatExceptionOfType(IllegalStateException.class)
			.isThrownBy(() -> policies.change("api", new RateLimitPolicy.Change(4L, null, null, null)));
		assertThat(policies.get("api").limit().limit()).isEqualTo(2);
		assertThat(policies.get("api").isOverridden()).isFalse();
		shared.refuse = false;
		policies.change("api", new RateLimitPolicy.Change(4L, null, null, null));
		policies.change("api", new RateLimitPolicy.Change(null, Duration.ofMinutes(1), null, null));
		assertThat(shared.values).containsEntry("api", "{\"limit\":4,\"period\":\"PT1M\"}");
		policies.restore("api");
		assertThat(shared.values).doesNotContainKey("api");
	}

	@Test
	void aRefreshUnderAnOverrideKeepsTheOverrideAndABadRefreshChangesNothing(CapturedOutput output) {
		RateLimitPolicies policies = policies();
		policies.change("api", new RateLimitPolicy.Change(10L, null, null, null));
		assertThat(policies.reconfigure("api", 6L, Duration.ofHours(1), null, Map.of())).isTrue();
		assertThat(policies.get("api").limit().limit()).isEqualTo(10);
		policies.restore("api");
		assertThat(policies.get("api").limit().limit()).isEqualTo(6);
		assertThat(policies.reconfigure("api", 6L, Duration.ofHours(1), 3L, Map.of())).as("burst for a token bucket")
			.isTrue();
		assertThat(policies.reconfigure("api", -1L, Duration.ofHours(1), null, Map.of())).isFalse();
		assertThat(policies.get("api").limit().limit()).isEqualTo(6);
		assertThat(policies.get("api").limit().burst()).isEqualTo(3);
		assertThat(output).contains("limit must be positive, was -1");
	}

	private RateLimitPolicies policies() {
		RateLimitPolicy api = RateLimitPolicy.define(new PolicyDefinition("api", "api", "rate-limit.policies.api",
				false, Algorithm.TOKEN_BUCKET, 2L, Duration.ofHours(1), null, "ip", 1, OnLimit.REJECT, Duration.ZERO,
				CountMode.ALL, false), this.keyResolvers);
		return new RateLimitPolicies(Map.of("api", api));
	}

	/** The shared store's contract in memory: what the Redis store does with a hash and a counter. */
	private static final class InMemory implements SharedPolicyOverrides {

		final Map<String, String> values = new LinkedHashMap<>();

		boolean refuse;

		private @Nullable Consumer<Map<String, String>> listener;

		@Override
		public void storeOverride(String policy, @Nullable String value) {
			if (this.refuse) {
				throw new IllegalStateException("Redis did not answer");
			}
			if (value == null) {
				this.values.remove(policy);
			}
			else {
				this.values.put(policy, value);
			}
		}

		@Override
		public void listenToOverrides(Consumer<Map<String, String>> listener) {
			this.listener = listener;
			publish();
		}

		void publish() {
			this.listener.accept(Map.copyOf(this.values));
		}

	}

	@Test
	void policyNamesAreQuotedAsStructuredFieldStrings() {
		assertThat(RateLimitPolicy.sfString("api")).isEqualTo("\"api\"");
		assertThat(RateLimitPolicy.sfString("say \"hi\" \\ now")).isEqualTo("\"say \\\"hi\\\" \\\\ now\"");
		assertThat(RateLimitPolicy.sfString("caf\u00e9\n")).isEqualTo("\"caf??\"");
	}

}
