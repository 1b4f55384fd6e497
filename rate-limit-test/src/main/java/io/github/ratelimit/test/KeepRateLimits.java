package io.github.ratelimit.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * On a Spring test class (or a class it is nested in): the budgets it spends are not reset after each of
 * its tests, so that one test may go on where another stopped; they are reset once after the class, so
 * that the classes after it start with full budgets. {@link ResetRateLimitsTestExecutionListener} resets
 * them after each test otherwise.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
public @interface KeepRateLimits {

}
