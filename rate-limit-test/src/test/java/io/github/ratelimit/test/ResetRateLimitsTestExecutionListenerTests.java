package io.github.ratelimit.test;

import java.lang.reflect.Method;
import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.test.context.ContextConfiguration;
import org.springframework.test.context.TestContextManager;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.Decision;
import io.github.ratelimit.core.RateLimitStore;
import io.github.ratelimit.core.CaffeineRateLimitStore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * The listener as Spring's TestContext framework drives it: found through spring.factories, and a
 * store that cannot reset fails the test that used it, naming the store and the way out.
 */
class ResetRateLimitsTestExecutionListenerTests {

	@Test
	void isRegisteredThroughSpringFactories() {
		// The default listeners of a test class that declares none: those of every spring.factories.
		assertThat(new TestContextManager(WithAStoreThatCannotReset.class).getTestExecutionListeners())
			.hasAtLeastOneElementOfType(ResetRateLimitsTestExecutionListener.class);
	}

	@Test
	void aStoreThatCannotResetFailsTheTestNamingTheStore() throws Exception {
		TestContextManager manager = new TestContextManager(WithAStoreThatCannotReset.class);
		WithAStoreThatCannotReset instance = new WithAStoreThatCannotReset();
		Method test = WithAStoreThatCannotReset.class.getDeclaredMethod("test");
		manager.beforeTestClass();
		manager.prepareTestInstance(instance);
		manager.beforeTestMethod(instance, test);
		assertThatIllegalStateException().isThrownBy(() -> manager.afterTestMethod(instance, test, null))
			.withMessageContaining(ForeignStore.class.getName() + " does not support RateLimitStore.resetAll()")
			.withMessageContaining("@" + KeepRateLimits.class.getName());
		manager.afterTestClass();
	}

	@Test
	void aClassThatKeepsItsBudgetsResetsThemOnceItIsDone() throws Exception {
		TestContextManager manager = new TestContextManager(Kept.class);
		Kept instance = new Kept();
		Method test = Kept.class.getDeclaredMethod("test");
		manager.beforeTestClass();
		manager.prepareTestInstance(instance);
		manager.beforeTestMethod(instance, test);
		RateLimitStore store = manager.getTestContext().getApplicationContext().getBean(RateLimitStore.class);
		store.resetAll();
		assertThat(ResetAfterEachTestTests.drain(store, ResetAfterEachTestTests.ALICE)).isEqualTo(3);
		manager.afterTestMethod(instance, test, null);
		assertThat(ResetAfterEachTestTests.drain(store, ResetAfterEachTestTests.ALICE)).as("kept between its tests")
			.isZero();
		manager.afterTestClass();
		assertThat(ResetAfterEachTestTests.drain(store, ResetAfterEachTestTests.ALICE)).as("reset after the class")
			.isEqualTo(3);
		// The context is cached and shared with ResetAfterEachTestTests: leave it whole.
		store.resetAll();
	}

	@KeepRateLimits
	@ContextConfiguration(classes = ResetAfterEachTestTests.Config.class)
	static class Kept {

		void test() {
		}

	}

	@ContextConfiguration(classes = WithAStoreThatCannotReset.Config.class)
	static class WithAStoreThatCannotReset {

		void test() {
		}

		@Configuration(proxyBeanMethods = false)
		static class Config {

			@Bean
			RateLimitStore store() {
				return new ForeignStore(new CaffeineRateLimitStore(10, new ManualClock()));
			}

		}

	}

	/** A store of another library's, which knows nothing of resetAll: it keeps the SPI's default. */
	record ForeignStore(RateLimitStore delegate) implements RateLimitStore {

		@Override
		public Decision tryAcquire(Acquisition acquisition) {
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

		@Override
		public List<Decision> tryAcquireAll(List<Acquisition> acquisitions) {
			return this.delegate.tryAcquireAll(acquisitions);
		}

	}
}
