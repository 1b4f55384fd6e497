package io.github.ratelimit.redis;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.OptionalLong;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.Ban;
import io.github.ratelimit.core.Limit;

/**
 * The scripts' wire formats: the arguments of a call and the decisions its reply encodes (see
 * docs/redis.md, "Coalescing" and "Replies"). Three formats of a decision: the plain one (a request alone:
 * its deadline and its acquisitions' values), the batch one of driver.lua (the earliest deadline, each
 * distinct limit once, each distinct shape once, then per request its deadline and shape indexes) and one
 * bucket shape (lone-bucket.lua: the plain arguments, then each request's deadline); then the give-backs'
 * and the lease refresh's. Thread-safe.
 */
final class ScriptCodec {

	/** The deadline argument of a call that has none. */
	static final byte[] NO_DEADLINE = new byte[0];

	private static final byte[] BATCH = bytes("batch");

	private static final byte[] ACQUIRE_BAN = bytes("acquire-ban");

	/** The arguments of small numbers (counts, indexes, costs), shared: Lettuce only reads them. */
	private static final byte[][] SMALL_NUMBERS = new byte[1024][];

	static {
		for (int i = 0; i < SMALL_NUMBERS.length; i++) {
			SMALL_NUMBERS[i] = bytes(Integer.toString(i));
		}
	}

	/** One script call: its script, {@code KEYS} and {@code ARGV}. */
	record Call(LuaScript script, byte[][] keys, byte[][] args) {
	}

	private record EncodedLimit(Limit limit, byte[][] args) {
	}

	final RedisKeys keys;

	final LuaScripts scripts = LuaScripts.load();

	private final ScriptClock clock;

	private final long leaseExpiryMicros;

	/** The last limit a batch carried and its 5 arguments: most batches carry the same one. */
	private volatile @Nullable EncodedLimit lastLimit;

	ScriptCodec(RedisSettings settings) {
		this.keys = new RedisKeys(settings.keyPrefix);
		this.clock = settings.clock;
		this.leaseExpiryMicros = micros(settings.leaseExpiry.toNanos());
	}

	byte[][] keys(List<Acquisition> acquisitions) {
		byte[][] keys = new byte[acquisitions.size()][];
		for (int i = 0; i < keys.length; i++) {
			keys[i] = this.keys.key(acquisitions.get(i).limitId(), acquisitions.get(i).key());
		}
		return keys;
	}

	/**
	 * A call of one request in the plain format: an acquisition goes to its script of acquisitions
	 * (lone-bucket.lua for one bucket), a check to the read-only script, the rest to the algorithm's.
	 * @param leases per acquisition, the lease of a concurrency limit (else {@code null}), or {@code null}
	 */
	Call call(ScriptOp op, List<Acquisition> acquisitions, byte[][] keys, byte[] deadlineArg,
			Leases.Lease @Nullable [] leases) {
		if (op == ScriptOp.ACQUIRE && bans(acquisitions)) {
			return banning(acquisitions, keys, deadlineArg, leases);
		}
		LuaScript script = switch (op) {
			case ACQUIRE -> this.scripts.forAcquire(acquisitions);
			case CHECK -> this.scripts.check();
			default -> this.scripts.forAcquisitions(acquisitions);
		};
		byte[][] args = new byte[3 + 7 * acquisitions.size()][];
		args[0] = this.clock.arg();
		args[1] = op.arg;
		args[2] = deadlineArg;
		for (int a = 0, i = 3; a < acquisitions.size(); a++) {
			i = acquisitionArgs(args, i, acquisitions.get(a), op, (leases != null) ? leases[a] : null);
		}
		return new Call(script, keys, args);
	}

	/** Says whether an acquisition of the request may ban its key ({@link Acquisition#ban()}). */
	static boolean bans(List<Acquisition> acquisitions) {
		// A loop, not a stream: asked up to three times per request.
		for (int i = 0; i < acquisitions.size(); i++) {
			if (acquisitions.get(i).ban() != null) {
				return true;
			}
		}
		return false;
	}

	/**
	 * The plain format of a request whose acquisitions may ban their keys (driver.lua's {@code acquire-ban}):
	 * each acquisition's values and its ban's after, within and duration ({@code 0 0 0} for none); the state
	 * keys, then each one's ban key ({@link RedisKeys#banKey}, in its slot).
	 */
	private Call banning(List<Acquisition> acquisitions, byte[][] keys, byte[] deadlineArg,
			Leases.Lease @Nullable [] leases) {
		int n = acquisitions.size();
		byte[][] args = new byte[3 + 10 * n][];
		args[0] = this.clock.arg();
		args[1] = ACQUIRE_BAN;
		args[2] = deadlineArg;
		byte[][] all = Arrays.copyOf(keys, 2 * n);
		for (int a = 0, i = 3; a < n; a++) {
			Acquisition acquisition = acquisitions.get(a);
			i = acquisitionArgs(args, i, acquisition, ScriptOp.ACQUIRE, (leases != null) ? leases[a] : null);
			Ban ban = acquisition.ban();
			args[i++] = number((ban != null) ? ban.after() : 0);
			args[i++] = number((ban != null) ? micros(ban.withinNanos()) : 0);
			args[i++] = number((ban != null) ? micros(ban.durationNanos()) : 0);
			all[n + a] = RedisKeys.banKey(keys[a]);
		}
		return new Call(this.scripts.forAcquisitions(acquisitions), all, args);
	}

	/**
	 * One script call for coalesced decisions: a request alone in the plain format (its reply is its own, see
	 * {@link Coalescer#split}), requests of one bucket shape in lone-bucket.lua's, others in the batch format.
	 */
	Call batch(List<Coalescer.Pending> requests) {
		if (requests.size() == 1) {
			Coalescer.Pending pending = requests.get(0);
			return call(ScriptOp.ACQUIRE, pending.acquisitions, pending.keys, pending.deadlineArg, null);
		}
		if (isOneBucketShape(requests)) {
			return oneBucketShape(requests);
		}
		int count = requests.stream().mapToInt((pending) -> pending.keys.length).sum();
		List<Acquisition> all = new ArrayList<>(count);
		List<Limit> limits = new ArrayList<>(4);
		// Per distinct shape (limit, cost and maximum wait), its first acquisition.
		List<Acquisition> shapes = new ArrayList<>(4);
		int[] shapeOf = new int[count];
		for (Coalescer.Pending pending : requests) {
			for (Acquisition acquisition : pending.acquisitions) {
				if (!limits.contains(acquisition.limit())) {
					limits.add(acquisition.limit());
				}
				int shape = 0;
				while (shape < shapes.size() && !sameShape(shapes.get(shape), acquisition)) {
					shape++;
				}
				if (shape == shapes.size()) {
					shapes.add(acquisition);
				}
				shapeOf[all.size()] = shape;
				all.add(acquisition);
			}
		}
		byte[][] keys = new byte[count][];
		byte[][] args = new byte[6 + 5 * limits.size() + 3 * shapes.size() + 2 * requests.size() + count][];
		args[0] = this.clock.arg();
		args[1] = BATCH;
		args[2] = number(requests.size());
		// The earliest deadline of the requests that have one: before it, the script reads no request's own.
		args[3] = earliestDeadline(requests);
		args[4] = number(limits.size());
		int i = 5;
		for (Limit limit : limits) {
			byte[][] encoded = limitArgs(limit);
			System.arraycopy(encoded, 0, args, i, encoded.length);
			i += encoded.length;
		}
		args[i++] = number(shapes.size());
		for (Acquisition shape : shapes) {
			args[i++] = number(limits.indexOf(shape.limit()) + 1);
			args[i++] = number(shape.cost());
			args[i++] = number(shape.maxWaitNanos() / 1000);
		}
		int k = 0;
		for (Coalescer.Pending pending : requests) {
			System.arraycopy(pending.keys, 0, keys, k, pending.keys.length);
			args[i++] = pending.deadlineArg;
			args[i++] = number(pending.acquisitions.size());
			for (int j = 0; j < pending.acquisitions.size(); j++) {
				args[i++] = number(shapeOf[k++] + 1);
			}
		}
		return new Call(this.scripts.forAcquisitions(all), keys, args);
	}

	/**
	 * Says whether every request is one acquisition of the same bucket limit, cost and maximum wait (the
	 * common batch: one policy's requests): then lone-bucket.lua decides them all, without driver.lua's
	 * batch header and functions.
	 */
	private static boolean isOneBucketShape(List<Coalescer.Pending> requests) {
		Acquisition first = requests.get(0).acquisitions.get(0);
		Algorithm algorithm = first.limit().algorithm();
		if (algorithm != Algorithm.TOKEN_BUCKET && algorithm != Algorithm.LEAKY_BUCKET) {
			return false;
		}
		for (Coalescer.Pending pending : requests) {
			if (pending.acquisitions.size() != 1 || !sameShape(pending.acquisitions.get(0), first)) {
				return false;
			}
		}
		return true;
	}

	/** Says whether two acquisitions have one shape: the same limit, cost and maximum wait (in microseconds). */
	private static boolean sameShape(Acquisition one, Acquisition other) {
		return one.limit().equals(other.limit()) && one.cost() == other.cost() && one.maxWaitNanos() / 1000 == other.maxWaitNanos() / 1000;
	}

	/** Requests of one bucket shape: one key each, the plain format's arguments with the earliest deadline, then each one's. */
	private Call oneBucketShape(List<Coalescer.Pending> requests) {
		int n = requests.size();
		byte[][] keys = new byte[n][];
		for (int i = 0; i < n; i++) {
			keys[i] = requests.get(i).keys[0];
		}
		Call plain = call(ScriptOp.ACQUIRE, requests.get(0).acquisitions, keys, earliestDeadline(requests), null);
		byte[][] args = Arrays.copyOf(plain.args(), plain.args().length + n);
		for (int i = 0; i < n; i++) {
			args[plain.args().length + i] = requests.get(i).deadlineArg;
		}
		return new Call(plain.script(), keys, args);
	}

	private static byte[] earliestDeadline(List<Coalescer.Pending> requests) {
		OptionalLong earliest = requests.stream()
			.mapToLong((pending) -> pending.serverDeadline)
			.filter((deadline) -> deadline != ServerClock.NONE)
			.min();
		return earliest.isPresent() ? number(earliest.getAsLong()) : NO_DEADLINE;
	}

	/** One call of give-backs, one acquisition each, in the plain format whose max waits carry the marks (see give-back.lua). */
	Call giveBacks(List<Coalescer.Pending> requests) {
		List<Acquisition> acquisitions = new ArrayList<>(requests.size());
		byte[][] keys = new byte[requests.size()][];
		for (int i = 0; i < keys.length; i++) {
			acquisitions.add(requests.get(i).acquisitions.get(0));
			keys[i] = requests.get(i).keys[0];
		}
		// A late give-back is harmless: it gives back only what is still held when it runs.
		byte[][] args = call(ScriptOp.GIVE_BACK, acquisitions, keys, NO_DEADLINE, null).args();
		for (int i = 0; i < keys.length; i++) {
			args[3 + 7 * i + 2] = number(requests.get(i).mark);
		}
		return new Call(this.scripts.giveBack(), keys, args);
	}

	/** One call refreshing leases (lease-refresh.lua): per key, its leases' ids and costs. */
	Call leaseRefresh(List<List<Leases.Lease>> byKey) {
		byte[][] keys = new byte[byKey.size()][];
		List<byte[]> args = new ArrayList<>();
		args.add(this.clock.arg());
		args.add(number(this.leaseExpiryMicros));
		for (int i = 0; i < keys.length; i++) {
			List<Leases.Lease> ofKey = byKey.get(i);
			keys[i] = ofKey.get(0).key;
			args.add(number(ofKey.size()));
			for (Leases.Lease lease : ofKey) {
				args.add(bytes(lease.id));
				args.add(number(lease.cost));
			}
		}
		return new Call(this.scripts.leaseRefresh(), keys, args.toArray(byte[][]::new));
	}

	private byte[][] limitArgs(Limit limit) {
		EncodedLimit last = this.lastLimit;
		if (last != null && (last.limit() == limit || last.limit().equals(limit))) {
			return last.args();
		}
		byte[][] args = { bytes(limit.algorithm().id()), number(limit.limit()), number(micros(limit.period().toNanos())),
				number(limit.burst()), number(micros(limit.emissionIntervalNanos())) };
		this.lastLimit = new EncodedLimit(limit, args);
		return args;
	}

	private int acquisitionArgs(byte[][] args, int at, Acquisition acquisition, ScriptOp op, Leases.@Nullable Lease lease) {
		Limit limit = acquisition.limit();
		int i = at;
		args[i++] = bytes(limit.algorithm().id());
		args[i++] = number((op == ScriptOp.PEEK) ? 0 : acquisition.cost());
		args[i++] = number(acquisition.maxWaitNanos() / 1000);
		args[i++] = number(limit.limit());
		if (limit.algorithm() == Algorithm.CONCURRENCY) {
			// A lease: its expiry as the period, its id as the interval (see concurrency.lua).
			args[i++] = number(this.leaseExpiryMicros);
			args[i++] = number(limit.burst());
			args[i++] = (lease != null) ? bytes(lease.id) : NO_DEADLINE;
			return i;
		}
		args[i++] = number(micros(limit.period().toNanos()));
		args[i++] = number(limit.burst());
		args[i++] = number(micros(limit.emissionIntervalNanos()));
		return i;
	}

	/** A deadline in the server's time as the scripts' argument: {@code ''} for none. */
	static byte[] deadlineArg(long serverDeadline) {
		return (serverDeadline == ServerClock.NONE) ? NO_DEADLINE : number(serverDeadline);
	}

	/** Nanoseconds in the scripts' microseconds, rounded up. */
	static long micros(long nanos) {
		return -Math.floorDiv(-nanos, 1000L);
	}

	static byte[] number(long value) {
		return (value >= 0 && value < SMALL_NUMBERS.length) ? SMALL_NUMBERS[(int) value] : bytes(Long.toString(value));
	}

	static byte[] bytes(String value) {
		return value.getBytes(StandardCharsets.US_ASCII);
	}
}
