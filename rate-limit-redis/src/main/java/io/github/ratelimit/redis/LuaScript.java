package io.github.ratelimit.redis;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * A script's source and its SHA-1, the name {@code EVALSHA} calls it by.
 *
 * @param name what it decides, for messages
 * @param source the Lua source
 * @param sha1 the lower-case hex SHA-1 of the source
 */
record LuaScript(String name, byte[] source, String sha1) {

	static LuaScript of(String name, String source) {
		byte[] bytes = source.getBytes(StandardCharsets.UTF_8);
		try {
			return new LuaScript(name, bytes, HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(bytes)));
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-1 is missing from this JVM", ex);
		}
	}

	@Override
	public String toString() {
		return this.name + " (" + this.sha1 + ")";
	}
}
