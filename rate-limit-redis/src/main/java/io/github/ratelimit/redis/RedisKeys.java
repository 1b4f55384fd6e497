package io.github.ratelimit.redis;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Locale;

import org.springframework.data.redis.connection.RedisClusterConnection;
import org.springframework.data.redis.connection.RedisClusterNode;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.Cursor;
import org.springframework.data.redis.core.ScanOptions;

/**
 * The key layout: {@code <prefix>{<limitId>:<key>}}, and a ban's {@code <prefix>{<limitId>:<key>}:ban}.
 * The braces are a Redis Cluster hash tag, so all
 * of one key's state sits in one slot. {@code %}, {@code #}, the braces and (in the limit id)
 * {@code :} are percent-encoded, and so is an unpaired surrogate (as {@code %D800} to {@code %DFFF}, which
 * UTF-8 cannot write), so two different (limit id, key) pairs never share a Redis key; a
 * part longer than {@value #MAX_PART_LENGTH} characters is replaced by {@code #} and its SHA-256, so a
 * Redis key never grows with client input. For tests, it deletes every key it makes ({@link #unlinkAll}).
 * Thread-safe.
 */
final class RedisKeys {

	static final int MAX_PART_LENGTH = 64;

	/** Keys per {@code SCAN} and per {@code UNLINK} of {@link #unlinkAll}. */
	private static final int BATCH = 500;

	private static final byte[] BAN_SUFFIX = ":ban".getBytes(StandardCharsets.US_ASCII);

	private final String prefix;

	RedisKeys(String prefix) {
		this.prefix = prefix;
	}

	byte[] key(String limitId, String key) {
		String tag = part(limitId, true) + ":" + part(key, false);
		return (this.prefix + "{" + tag + "}").getBytes(StandardCharsets.UTF_8);
	}

	/**
	 * Returns the key of a state's ban ({@link io.github.ratelimit.core.Ban}): the state's key and
	 * {@code :ban}, after its hash tag, so both sit in one slot.
	 * @param stateKey the state's key
	 * @return the ban's key
	 */
	static byte[] banKey(byte[] stateKey) {
		byte[] key = Arrays.copyOf(stateKey, stateKey.length + BAN_SUFFIX.length);
		System.arraycopy(BAN_SUFFIX, 0, key, stateKey.length, BAN_SUFFIX.length);
		return key;
	}

	/**
	 * Returns the {@code SCAN MATCH} pattern of every key this layout makes, and of no key outside it
	 * (a different prefix, the prefix without the brace that opens the tag, or the store's own keys of
	 * runtime changes, {@code {overrides}}, whose tag has no {@code :}): the prefix with glob characters
	 * escaped, then <code>{*:*}</code>.
	 * @return the pattern
	 */
	byte[] pattern() {
		StringBuilder pattern = new StringBuilder(this.prefix.length() + 4);
		for (int i = 0; i < this.prefix.length(); i++) {
			char c = this.prefix.charAt(i);
			if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') {
				pattern.append('\\');
			}
			pattern.append(c);
		}
		// A ban's key follows its state's: the tag, then ':ban'.
		return pattern.append("{*:*}*").toString().getBytes(StandardCharsets.UTF_8);
	}

	/**
	 * Deletes every key of this layout ({@link #pattern()}), for tests: {@code SCAN} with {@code MATCH} (never
	 * {@code KEYS}, which blocks the server), then {@code UNLINK} (the memory is freed off the main thread).
	 * On Redis Cluster, each master is scanned on its own, and each key is unlinked alone (the keys of one
	 * batch would sit in different slots). Not atomic: a key written during the scan may stay.
	 * @param factory the connections
	 */
	void unlinkAll(RedisConnectionFactory factory) {
		ScanOptions options = ScanOptions.scanOptions().match(pattern()).count(BATCH).build();
		try (RedisConnection connection = factory.getConnection()) {
			if (connection instanceof RedisClusterConnection cluster) {
				for (RedisClusterNode node : cluster.clusterGetNodes()) {
					if (node.isMaster()) {
						try (Cursor<byte[]> keys = cluster.scan(node, options)) {
							keys.forEachRemaining(cluster.keyCommands()::unlink);
						}
					}
				}
				return;
			}
			try (Cursor<byte[]> keys = connection.keyCommands().scan(options)) {
				List<byte[]> batch = new ArrayList<>(BATCH);
				while (keys.hasNext()) {
					batch.add(keys.next());
					if (batch.size() == BATCH || !keys.hasNext()) {
						connection.keyCommands().unlink(batch.toArray(byte[][]::new));
						batch.clear();
					}
				}
			}
		}
	}

	private static String part(String value, boolean limitId) {
		StringBuilder encoded = new StringBuilder(value.length() + 8);
		boolean unpaired = false;
		for (int i = 0; i < value.length(); i++) {
			char c = value.charAt(i);
			switch (c) {
				case '%' -> encoded.append("%25");
				case '#' -> encoded.append("%23");
				case '{' -> encoded.append("%7B");
				case '}' -> encoded.append("%7D");
				case ':' -> encoded.append(limitId ? "%3A" : ":");
				default -> {
					if (!Character.isSurrogate(c)) {
						encoded.append(c);
					}
					else if (Character.isHighSurrogate(c) && i + 1 < value.length()
							&& Character.isLowSurrogate(value.charAt(i + 1))) {
						encoded.append(c).append(value.charAt(++i));
					}
					else {
						// Unpaired: UTF-8 would write it as '?', the key of a client named "?".
						encoded.append('%').append(Integer.toHexString(c).toUpperCase(Locale.ROOT));
						unpaired = true;
					}
				}
			}
		}
		if (encoded.length() <= MAX_PART_LENGTH) {
			return encoded.toString();
		}
		// The value's UTF-8 is hashed, which never holds the byte 0xFF. A value with an unpaired surrogate
		// (which UTF-8 cannot write) is hashed as 0xFF and its encoded form, so it shares no hash with another.
		byte[] hashed = value.getBytes(StandardCharsets.UTF_8);
		if (unpaired) {
			byte[] utf8 = encoded.toString().getBytes(StandardCharsets.UTF_8);
			hashed = new byte[utf8.length + 1];
			hashed[0] = (byte) 0xFF;
			System.arraycopy(utf8, 0, hashed, 1, utf8.length);
		}
		return "#" + sha256(hashed);
	}

	private static String sha256(byte[] value) {
		try {
			byte[] digest = MessageDigest.getInstance("SHA-256").digest(value);
			return Base64.getUrlEncoder().withoutPadding().encodeToString(digest);
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-256 is missing from this JVM", ex);
		}
	}
}
