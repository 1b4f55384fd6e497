package io.github.ratelimit.redis;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.Algorithm;

/**
 * The Lua scripts, one per {@link Algorithm} (found by its id: {@code lua/<id>.lua}) plus one that
 * holds them all for requests whose limits use different algorithms. Each script is the shared
 * prelude, the algorithm(s), and the driver that reads the arguments. A last one, {@code check.lua}
 * after every algorithm, checks budgets without writing; {@code give-back.lua}, after every algorithm too,
 * gives back what receipts still hold; {@code lease-refresh.lua} refreshes the leases
 * of concurrency limits; {@code lone-bucket.lua}, on its own, acquires a request's one acquisition of a
 * bucket (the common request) without defining the prelude's functions. Immutable.
 * @param check the read-only script that checks acquisitions of any algorithms without taking anything
 * @param giveBack gives back what receipts still hold, of any algorithms ({@code give-back.lua})
 * @param leaseRefresh refreshes the leases of concurrency limits an instance holds ({@code lease-refresh.lua})
 */
record LuaScripts(Map<Algorithm, LuaScript> byAlgorithm, LuaScript combined, LuaScript check, LuaScript giveBack,
		LuaScript leaseRefresh, LuaScript loneBucket) {

	private static final String LOCATION = "lua/";

	static LuaScripts load() {
		String prelude = read("prelude.lua");
		String driver = read("driver.lua");
		Map<Algorithm, LuaScript> byAlgorithm = new EnumMap<>(Algorithm.class);
		StringBuilder all = new StringBuilder(prelude);
		for (Algorithm algorithm : Algorithm.values()) {
			String source = read(algorithm.id() + ".lua");
			byAlgorithm.put(algorithm, LuaScript.of(algorithm.id(), prelude + source + driver));
			all.append(source);
		}
		return new LuaScripts(byAlgorithm, LuaScript.of("combined", all + driver),
				LuaScript.of("check", all + read("check.lua")), LuaScript.of("give-back", all + read("give-back.lua")),
				LuaScript.of("lease-refresh", read("lease-refresh.lua")),
				LuaScript.of("lone-bucket", read("lone-bucket.lua")));
	}

	/**
	 * Returns the script that acquires one request's acquisitions: {@code lone-bucket.lua} for a single
	 * acquisition of a bucket, else {@link #forAcquisitions}. Releases, checks and batches use the others.
	 * @param acquisitions the request's, one or more
	 * @return the script
	 */
	LuaScript forAcquire(List<Acquisition> acquisitions) {
		if (acquisitions.size() == 1) {
			Algorithm algorithm = acquisitions.get(0).limit().algorithm();
			if (algorithm == Algorithm.TOKEN_BUCKET || algorithm == Algorithm.LEAKY_BUCKET) {
				return this.loneBucket;
			}
		}
		return forAcquisitions(acquisitions);
	}

	/**
	 * Returns the script that decides the given acquisitions in one call.
	 * @param acquisitions one or more
	 * @return the script of their algorithm, or the combined one when they use several
	 */
	LuaScript forAcquisitions(List<Acquisition> acquisitions) {
		Algorithm algorithm = acquisitions.get(0).limit().algorithm();
		for (int i = 1; i < acquisitions.size(); i++) {
			if (acquisitions.get(i).limit().algorithm() != algorithm) {
				return this.combined;
			}
		}
		return this.byAlgorithm.get(algorithm);
	}

	List<LuaScript> all() {
		List<LuaScript> all = new ArrayList<>(this.byAlgorithm.values());
		all.addAll(List.of(this.combined, this.check, this.giveBack, this.leaseRefresh, this.loneBucket));
		return all;
	}

	private static String read(String name) {
		try (InputStream in = LuaScripts.class.getResourceAsStream(LOCATION + name)) {
			if (in == null) {
				throw new IllegalStateException("No Lua script " + name + " next to " + LuaScripts.class.getName()
						+ ": every algorithm needs one in the Redis store");
			}
			return new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new IllegalStateException("Cannot read the Lua script " + name, ex);
		}
	}
}
