package io.github.ratelimit.redis;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.Receipt;

/**
 * The leases of concurrency limits this store holds: one per request's acquisition, taken before its call
 * (so that a refresh never misses one Redis has granted), and a thread that refreshes those held in Redis
 * every third of their expiry, one script call per hash slot (per {@value #REFRESH_BATCH} keys), each
 * waiting at most the timeout. A call that fails leaves those leases to the next refresh, and to their
 * expiry (see the store's description, "Concurrency limits"). Thread-safe.
 */
final class Leases {

	private static final int REFRESH_BATCH = 256;

	/** A request's slot of a concurrency limit: where it was taken, and its lease in Redis. */
	static final class Lease {

		final String id;

		final byte[] key;

		final long cost;

		/**
		 * Where the slot was taken: {@code STORE}, Redis (refreshed, released there); {@code LOCAL}, the local
		 * store; or {@code NOWHERE}.
		 */
		volatile Receipt.Place where = Receipt.Place.STORE;

		Lease(String id, byte[] key, long cost) {
			this.id = id;
			this.key = key;
			this.cost = cost;
		}

	}

	/** An acquisition by identity: equal acquisitions of two requests are two slots. */
	private record Identity(Acquisition acquisition) {

		@Override
		public boolean equals(Object other) {
			return other instanceof Identity that && that.acquisition == this.acquisition;
		}

		@Override
		public int hashCode() {
			return System.identityHashCode(this.acquisition);
		}

	}

	/** Makes lease ids unique across instances: random per store, then a counter. */
	final String prefix = Long.toString(new SecureRandom().nextLong() & Long.MAX_VALUE, 36) + ".";

	private final AtomicLong counter = new AtomicLong();

	private final ConcurrentMap<Identity, Lease> held = new ConcurrentHashMap<>();

	private final ScriptCodec codec;

	private final RedisNodes nodes;

	private final long timeoutNanos;

	private final ScheduledExecutorService refresher = Executors
		.newSingleThreadScheduledExecutor((runnable) -> ScriptRunner.daemon(runnable, "rate-limit-redis-lease-refresh"));

	Leases(RedisSettings settings, ScriptCodec codec, RedisNodes nodes) {
		this.codec = codec;
		this.nodes = nodes;
		this.timeoutNanos = settings.timeoutNanos();
		if (settings.refreshLeases) {
			long every = Math.max(1_000_000L, settings.leaseExpiry.toNanos() / 3);
			this.refresher.scheduleWithFixedDelay(this::refresh, every, every, TimeUnit.NANOSECONDS);
		}
	}

	static boolean isConcurrency(Acquisition acquisition) {
		return acquisition.limit().algorithm() == Algorithm.CONCURRENCY;
	}

	/**
	 * Takes a lease for each acquisition of a concurrency limit, registered before its call.
	 * @return per acquisition its lease (else {@code null}); {@code null} when none is of a concurrency limit
	 */
	Lease @Nullable [] take(List<Acquisition> acquisitions, byte[][] keys) {
		Lease[] leases = null;
		for (int i = 0; i < keys.length; i++) {
			Acquisition acquisition = acquisitions.get(i);
			if (isConcurrency(acquisition)) {
				leases = (leases != null) ? leases : new Lease[keys.length];
				leases[i] = new Lease(this.prefix + this.counter.incrementAndGet(), keys[i], acquisition.cost());
				this.held.put(new Identity(acquisition), leases[i]);
			}
		}
		return leases;
	}

	/** Forgets the leases of a rejected request: all or nothing, it holds no slot (the script, or the local store, gave it back). */
	void forget(List<Acquisition> acquisitions, Lease[] leases) {
		for (int i = 0; i < leases.length; i++) {
			if (leases[i] != null) {
				this.held.remove(new Identity(acquisitions.get(i)));
			}
		}
	}

	/** Removes the lease of a request's acquisition, at its release: {@code null} when it holds none. */
	@Nullable Lease remove(Acquisition acquisition) {
		return this.held.remove(new Identity(acquisition));
	}

	long held() {
		return this.held.values().stream().filter((lease) -> lease.where == Receipt.Place.STORE).count();
	}

	/** Gives every lease this store holds in Redis a new expiry. */
	void refresh() {
		try {
			Map<Integer, Map<String, List<Lease>>> bySlot = new HashMap<>();
			for (Lease lease : this.held.values()) {
				if (lease.where == Receipt.Place.STORE) {
					bySlot.computeIfAbsent(this.nodes.lane(lease.key), (s) -> new LinkedHashMap<>())
						.computeIfAbsent(new String(lease.key, StandardCharsets.UTF_8), (k) -> new ArrayList<>())
						.add(lease);
				}
			}
			for (Map<String, List<Lease>> byKey : bySlot.values()) {
				List<List<Lease>> all = new ArrayList<>(byKey.values());
				for (int from = 0; from < all.size(); from += REFRESH_BATCH) {
					refresh(all.subList(from, Math.min(all.size(), from + REFRESH_BATCH)));
				}
			}
		}
		catch (RuntimeException ex) {
			// The scheduler must keep running: the next refresh tries again.
			RedisRateLimitStore.logger.debug("Redis rate limit store could not refresh its leases", ex);
		}
	}

	private void refresh(List<List<Lease>> byKey) {
		ScriptCodec.Call call = this.codec.leaseRefresh(byKey);
		RedisNode node = this.nodes.node(call.keys()[0]);
		try {
			this.nodes.run(call, node, System.nanoTime() + this.timeoutNanos);
			this.nodes.onAnswer(node);
		}
		catch (Exception ex) {
			this.nodes.onError(node, ex);
		}
	}

	/** Stops refreshing: leases this store still holds are not given back; like a crashed instance's, they expire. */
	void close() {
		this.refresher.shutdownNow();
	}
}
