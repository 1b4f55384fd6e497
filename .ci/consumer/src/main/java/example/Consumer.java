package example;

import io.github.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import io.github.ratelimit.core.Limit;
import io.github.ratelimit.redis.RedisRateLimitStore;
import io.github.ratelimit.test.ManualClock;
import io.github.ratelimit.web.RateLimited;

/**
 * Compiles against the published jars alone: the core, the auto-configuration, the annotation, the Redis store, and
 * the test artifact's clock.
 */
public class Consumer {

    @RateLimited(limit = 10, period = "1m")
    public String hello() {
        return "hello";
    }

    public static void main(String[] args) {
        System.out.println(RateLimitAutoConfiguration.class.getName() + " " + Limit.class.getName() + " "
                + RedisRateLimitStore.class.getName() + " " + new ManualClock().nanos());
    }
}
