package io.github.ratelimit.web.reactive;

import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.List;

import org.springframework.aop.framework.AopProxyUtils;
import org.springframework.util.ReflectionUtils;

import io.github.ratelimit.core.CaffeineRateLimitStore;
import io.github.ratelimit.core.RateLimitStore;

/**
 * How a reactive application calls a store without blocking an event loop: the WebFlux filter, and the
 * gateway's {@code RateLimiter}, which asks a store for its answer the same way.
 */
public enum StoreCalls {

	/** The in-process store: CPU only and bounded, every call inline. */
	INLINE,

	/**
	 * A store whose admissions do not block ({@link RateLimitStore#admitAllAsync} is its own, as the Redis
	 * store's): they are asked on the event loop; its other calls (give-backs, releases) may block, and run
	 * on Reactor's bounded elastic scheduler, as does the answer of a step.
	 */
	ASYNC,

	/** Any other store: every call on Reactor's bounded elastic scheduler. */
	BLOCKING;

	/**
	 * Tells how a store is called.
	 * @param store the store
	 * @return inline for the in-process store, asynchronously for a store of its own {@code admitAllAsync},
	 * else off the event loop
	 */
	public static StoreCalls of(RateLimitStore store) {
		if (store instanceof CaffeineRateLimitStore) {
			return INLINE;
		}
		// The class that implements the store, behind a Spring proxy; a JDK proxy's methods all look its own.
		Class<?> type = AopProxyUtils.ultimateTargetClass(store);
		if (Proxy.isProxyClass(type)) {
			return BLOCKING;
		}
		Method admitAllAsync = ReflectionUtils.findMethod(type, "admitAllAsync", List.class);
		return (admitAllAsync != null && admitAllAsync.getDeclaringClass() != RateLimitStore.class) ? ASYNC : BLOCKING;
	}

}
