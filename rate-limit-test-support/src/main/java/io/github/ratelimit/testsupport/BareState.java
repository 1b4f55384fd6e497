package io.github.ratelimit.testsupport;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.core.Decision;
import io.github.ratelimit.core.Limit;

/**
 * One key's algorithm state alone, without a store: the engine's package-private {@code LimiterState},
 * opened for the Lua agreement test (the reference the scripts are compared with) and the benchmarks'
 * breakdown (the algorithm without the store's lookup). Thread-safe, as the state is.
 * <p>
 * The states stay out of rate-limit-core's API, and no package spans two jars: this class reaches them
 * through a private lookup into the engine's package ({@link MethodHandles#privateLookupIn}, which the
 * class path, one unnamed module, allows). Its method handles are static and final, so that the JIT
 * inlines a call through them as it would a direct call.
 */
public final class BareState {

	/** {@code Limit.newState()}: (Limit) state. */
	private static final MethodHandle NEW_STATE;

	/** {@code LimiterState.limit()}: (state) Limit. */
	private static final MethodHandle LIMIT;

	/** {@code LimiterState.tryAcquire(long, long, long)}. */
	private static final MethodHandle TRY_ACQUIRE;

	/** {@code LimiterState.check(long, long)}. */
	private static final MethodHandle CHECK;

	/** {@code LimiterState.release(long, long)}. */
	private static final MethodHandle RELEASE;

	/** {@code LimiterState.peek(long)}. */
	private static final MethodHandle PEEK;

	/** {@code LimiterState.moveTo(Limit, long)}: (state, Limit, long) state. */
	private static final MethodHandle MOVE_TO;

	static {
		try {
			MethodHandles.Lookup engine = MethodHandles.privateLookupIn(Limit.class, MethodHandles.lookup());
			Class<?> state = engine.findClass("io.github.ratelimit.core.LimiterState");
			NEW_STATE = engine.findVirtual(Limit.class, "newState", MethodType.methodType(state))
				.asType(MethodType.methodType(Object.class, Limit.class));
			LIMIT = handle(engine, state, "limit", Limit.class);
			TRY_ACQUIRE = handle(engine, state, "tryAcquire", Decision.class, long.class, long.class, long.class);
			CHECK = handle(engine, state, "check", Decision.class, long.class, long.class);
			RELEASE = handle(engine, state, "release", Decision.class, long.class, long.class);
			PEEK = handle(engine, state, "peek", Decision.class, long.class);
			MOVE_TO = engine.findVirtual(state, "moveTo", MethodType.methodType(state, Limit.class, long.class))
				.asType(MethodType.methodType(Object.class, Object.class, Limit.class, long.class));
		}
		catch (ReflectiveOperationException ex) {
			throw new ExceptionInInitializerError(ex);
		}
	}

	/** A {@code LimiterState} method, its receiver typed {@code Object} (this class cannot name the type). */
	private static MethodHandle handle(MethodHandles.Lookup engine, Class<?> state, String name, Class<?> returned,
			Class<?>... parameters) throws ReflectiveOperationException {
		MethodType type = MethodType.methodType(returned, parameters);
		return engine.findVirtual(state, name, type).asType(type.insertParameterTypes(0, Object.class));
	}

	/** The engine's {@code LimiterState}. */
	private final Object state;

	private BareState(Object state) {
		this.state = state;
	}

	/**
	 * Creates the state of a key that has not been seen yet.
	 * @param limit the limit it enforces
	 * @return a fresh state
	 */
	public static BareState of(Limit limit) {
		try {
			return new BareState((Object) NEW_STATE.invokeExact(limit));
		}
		catch (Throwable ex) {
			throw unchecked(ex);
		}
	}

	/**
	 * Returns the limit this state enforces.
	 * @return the limit
	 */
	public Limit limit() {
		try {
			return (Limit) LIMIT.invokeExact(this.state);
		}
		catch (Throwable ex) {
			throw unchecked(ex);
		}
	}

	/**
	 * As {@code LimiterState.tryAcquire(long, long, long)}.
	 * @param nowNanos the current time (epoch nanoseconds)
	 * @param cost the tokens the request takes
	 * @param maxWaitNanos how long the request may wait for its turn
	 * @return the decision; {@code null} when retired
	 */
	public @Nullable Decision tryAcquire(long nowNanos, long cost, long maxWaitNanos) {
		try {
			return (Decision) TRY_ACQUIRE.invokeExact(this.state, nowNanos, cost, maxWaitNanos);
		}
		catch (Throwable ex) {
			throw unchecked(ex);
		}
	}

	/**
	 * As {@code LimiterState.check(long, long)}.
	 * @param nowNanos the current time (epoch nanoseconds)
	 * @param cost the tokens the request would take
	 * @return the decision; {@code null} when retired
	 */
	public @Nullable Decision check(long nowNanos, long cost) {
		try {
			return (Decision) CHECK.invokeExact(this.state, nowNanos, cost);
		}
		catch (Throwable ex) {
			throw unchecked(ex);
		}
	}

	/**
	 * As {@code LimiterState.release(long, long)}.
	 * @param nowNanos the current time (epoch nanoseconds)
	 * @param cost the tokens to give back
	 * @return how the state reads afterwards; {@code null} when retired
	 */
	public @Nullable Decision release(long nowNanos, long cost) {
		try {
			return (Decision) RELEASE.invokeExact(this.state, nowNanos, cost);
		}
		catch (Throwable ex) {
			throw unchecked(ex);
		}
	}

	/**
	 * As {@code LimiterState.peek(long)}.
	 * @param nowNanos the current time (epoch nanoseconds)
	 * @return what a request of cost 0 would be told; {@code null} when retired
	 */
	public @Nullable Decision peek(long nowNanos) {
		try {
			return (Decision) PEEK.invokeExact(this.state, nowNanos);
		}
		catch (Throwable ex) {
			throw unchecked(ex);
		}
	}

	/**
	 * As {@code LimiterState.moveTo(Limit, long)}.
	 * @param limit the new limit, of this state's algorithm
	 * @param nowNanos the current time (epoch nanoseconds)
	 * @return the successor; {@code null} when this state was retired already
	 */
	public @Nullable BareState moveTo(Limit limit, long nowNanos) {
		try {
			Object next = (Object) MOVE_TO.invokeExact(this.state, limit, nowNanos);
			return (next != null) ? new BareState(next) : null;
		}
		catch (Throwable ex) {
			throw unchecked(ex);
		}
	}

	/** What a state's method threw, as it was: the handles add no checked exception of their own. */
	private static RuntimeException unchecked(Throwable ex) {
		if (ex instanceof Error error) {
			throw error;
		}
		return (ex instanceof RuntimeException runtime) ? runtime : new IllegalStateException(ex);
	}

}
