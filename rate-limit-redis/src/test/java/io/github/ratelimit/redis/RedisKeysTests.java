package io.github.ratelimit.redis;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.Base64;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Redis key layout, {@code <prefix>{<limitId>:<key>}}: keys written as they are where nothing needs
 * encoding, and exactly as the percent-encoding and hashing rules say where something does.
 */
class RedisKeysTests {

	private final RedisKeys keys = new RedisKeys("rl:");

	@Test
	void aPlainKeyIsWrittenAsItIs() {
		assertThat(key("api", "ip:203.0.113.7")).isEqualTo("rl:{api:ip:203.0.113.7}");
		assertThat(key("api", "")).isEqualTo("rl:{api:}");
		assertThat(key("login:v2", "param:alice")).isEqualTo("rl:{login%3Av2:param:alice}");
	}

	@Test
	void whatWouldBreakTheLayoutIsEncodedWhereverItStands() {
		assertThat(key("api", "{b}")).isEqualTo("rl:{api:%7Bb%7D}");
		assertThat(key("api", "a%b#c")).isEqualTo("rl:{api:a%25b%23c}");
		assertThat(key("a{p}i", "k")).isEqualTo("rl:{a%7Bp%7Di:k}");
		assertThat(key("api", "x}")).isEqualTo("rl:{api:x%7D}");
	}

	@Test
	void keysBeyondAsciiAreUtf8() {
		assertThat(key("api", "zoë")).isEqualTo("rl:{api:zoë}");
		assertThat(this.keys.key("api", "zoë")).hasSize("rl:{api:zo}".length() + 2);
		assertThat(key("api", "k\uD83D\uDE00")).isEqualTo("rl:{api:k\uD83D\uDE00}");
	}

	@Test
	void anUnpairedSurrogateSharesNoKeyWithAQuestionMarkOrAnotherSurrogate() {
		// UTF-8 cannot write an unpaired surrogate (String#getBytes writes '?'): a JSON claim "\ud800" can hold one.
		assertThat(key("api", "a\uD800")).isEqualTo("rl:{api:a%D800}");
		assertThat(key("api", "a\uDC00b")).isEqualTo("rl:{api:a%DC00b}");
		assertThat(key("api", "\uDC00\uD800")).isEqualTo("rl:{api:%DC00%D800}");
		assertThat(key("api", "a?")).isEqualTo("rl:{api:a?}");
		String padding = "k".repeat(70);
		assertThat(key("api", padding + "\uD800")).isNotEqualTo(key("api", padding + "?"))
			.isNotEqualTo(key("api", padding + "\uDBFF"))
			.isNotEqualTo(key("api", padding + "%D800"));
	}

	@Test
	void aKeyOfMoreThan64CharactersAfterEncodingIsHashed() {
		String sixtyFour = "k".repeat(64);
		assertThat(key("api", sixtyFour)).isEqualTo("rl:{api:" + sixtyFour + "}");
		assertThat(key("api", sixtyFour + "k")).isEqualTo("rl:{api:#" + sha256(sixtyFour + "k") + "}");
		// 62 characters, 64 once the brace is encoded: kept; one more brace makes it 66: hashed.
		String sixtyTwo = "k".repeat(61) + "{";
		assertThat(key("api", sixtyTwo)).isEqualTo("rl:{api:" + "k".repeat(61) + "%7B}");
		assertThat(key("api", sixtyTwo + "{")).isEqualTo("rl:{api:#" + sha256(sixtyTwo + "{") + "}");
	}

	@Test
	void aLimitIdAskedAgainGivesTheSameKeyAndManyLimitIdsStayCorrect() {
		for (int i = 0; i < 3_000; i++) {
			assertThat(key("limit:" + i, "k")).isEqualTo("rl:{limit%3A" + i + ":k}");
			assertThat(key("limit:" + i, "k")).isEqualTo("rl:{limit%3A" + i + ":k}");
		}
	}

	@Test
	void randomKeysAgreeWithTheRules() {
		SplittableRandom random = new SplittableRandom(7);
		char[] alphabet = "ab:.%#{}é\u00ff\u0100\uD83D\uDE00-0".toCharArray();
		for (int trial = 0; trial < 20_000; trial++) {
			StringBuilder key = new StringBuilder();
			int length = random.nextInt(80);
			for (int i = 0; i < length; i++) {
				key.append(random.nextInt(4) == 0 ? alphabet[random.nextInt(alphabet.length)] : (char) ('a' + random.nextInt(26)));
			}
			// As bytes: a lone surrogate is written as '?', as String#getBytes does.
			assertThat(this.keys.key("api", key.toString())).as(key.toString())
				.isEqualTo(("rl:{api:" + expectedPart(key.toString()) + "}").getBytes(StandardCharsets.UTF_8));
		}
	}

	private String key(String limitId, String key) {
		return new String(this.keys.key(limitId, key), StandardCharsets.UTF_8);
	}

	/** The rules, written out: each character in turn, then the hash of a part too long. */
	private static String expectedPart(String key) {
		StringBuilder encoded = new StringBuilder();
		boolean unpaired = false;
		for (int i = 0; i < key.length(); i++) {
			int c = key.codePointAt(i);
			if (Character.isSupplementaryCodePoint(c)) {
				encoded.appendCodePoint(c);
				i++;
			}
			else if (Character.isSurrogate((char) c)) {
				encoded.append(String.format("%%%04X", c));
				unpaired = true;
			}
			else {
				encoded.append(switch (c) {
					case '%' -> "%25";
					case '#' -> "%23";
					case '{' -> "%7B";
					case '}' -> "%7D";
					default -> Character.toString(c);
				});
			}
		}
		if (encoded.length() <= RedisKeys.MAX_PART_LENGTH) {
			return encoded.toString();
		}
		return "#" + (unpaired ? sha256("\u00ff" + encoded, true) : sha256(key));
	}

	private static String sha256(String value) {
		return sha256(value, false);
	}

	/** The SHA-256 of a value's UTF-8, or with {@code marked} of 0xFF and then the UTF-8 of all but its first character. */
	private static String sha256(String value, boolean marked) {
		try {
			byte[] utf8 = value.getBytes(StandardCharsets.UTF_8);
			if (marked) {
				utf8 = Arrays.copyOfRange(utf8, 1, utf8.length);
				utf8[0] = (byte) 0xFF;
			}
			return Base64.getUrlEncoder().withoutPadding().encodeToString(MessageDigest.getInstance("SHA-256").digest(utf8));
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

}
