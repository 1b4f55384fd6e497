package io.github.ratelimit.test;

import org.springframework.context.ApplicationContext;
import org.springframework.core.Ordered;
import org.springframework.test.context.TestContext;
import org.springframework.test.context.TestContextAnnotationUtils;
import org.springframework.test.context.TestExecutionListener;

import io.github.ratelimit.core.RateLimitStore;

/**
 * Makes every budget whole again after each test method of a Spring test ({@code @SpringBootTest},
 * {@code @WebMvcTest}, ...), so that each test starts with full budgets however many requests the one
 * before it made: calls {@link RateLimitStore#resetAll()} on every {@link RateLimitStore} bean of the
 * test's application context. Registered for every Spring test by this artifact's
 * {@code META-INF/spring.factories}: adding the artifact is the opt-in; {@link KeepRateLimits} on a
 * test class keeps the budgets between its tests, and resets them once after the class. A test whose
 * context is not loaded, or has no store, is left alone.
 * <p>
 * A store that cannot reset ({@link UnsupportedOperationException}) fails the test with a message
 * that says so, rather than let the next test start with a spent budget. Thread-safe (stateless).
 */
public class ResetRateLimitsTestExecutionListener implements TestExecutionListener, Ordered {

	/**
	 * Late, as listeners that clean up after a test are: after a test method, listeners run in reverse
	 * order, so this one resets before a context that {@code @DirtiesContext} closes is gone.
	 */
	public static final int ORDER = Ordered.LOWEST_PRECEDENCE - 200;

	@Override
	public int getOrder() {
		return ORDER;
	}

	@Override
	public void afterTestMethod(TestContext testContext) {
		if (!isKept(testContext)) {
			resetAll(testContext, "after " + testContext.getTestMethod());
		}
	}

	/** A class that keeps its budgets between its tests leaves none spent for the classes after it. */
	@Override
	public void afterTestClass(TestContext testContext) {
		if (isKept(testContext)) {
			resetAll(testContext, "after " + testContext.getTestClass().getName());
		}
	}

	private static boolean isKept(TestContext testContext) {
		return TestContextAnnotationUtils.hasAnnotation(testContext.getTestClass(), KeepRateLimits.class);
	}

	private static void resetAll(TestContext testContext, String when) {
		if (!testContext.hasApplicationContext()) {
			return;
		}
		ApplicationContext context = testContext.getApplicationContext();
		for (RateLimitStore store : context.getBeanProvider(RateLimitStore.class).orderedStream().toList()) {
			try {
				store.resetAll();
			}
			catch (UnsupportedOperationException ex) {
				throw new IllegalStateException("Cannot reset the rate limit budgets after " + testContext.getTestMethod()
						+ ": the store " + store.getClass().getName() + " does not support RateLimitStore.resetAll(). "
						+ "Implement it, or annotate the test class with @" + KeepRateLimits.class.getName()
						+ " to keep budgets between its tests", ex);
			}
		}
	}
}
