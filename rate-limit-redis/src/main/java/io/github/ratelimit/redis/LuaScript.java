package io.github.ratelimit.redis;

import java.nio.charset.StandardCharsets;

import org.springframework.data.redis.core.script.DigestUtils;

/**
 * A script's source and its SHA-1, the name {@code EVALSHA} calls it by.
 *
 * @param name what it decides, for messages
 * @param source the Lua source
 * @param sha1 the lower-case hex SHA-1 of the source
 */
record LuaScript(String name, byte[] source, String sha1) {

	static LuaScript of(String name, String source) {
		return new LuaScript(name, source.getBytes(StandardCharsets.UTF_8), DigestUtils.sha1DigestAsHex(source));
	}

	@Override
	public String toString() {
		return this.name + " (" + this.sha1 + ")";
	}
}
