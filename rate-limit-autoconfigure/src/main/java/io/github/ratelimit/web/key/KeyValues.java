package io.github.ratelimit.web.key;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.text.Normalizer;
import java.util.Base64;
import java.util.regex.Pattern;

/**
 * What a key's value becomes before it names a budget: the part every way of reading a parameter or a
 * header agrees on, as the one identity its variants stand for, and bounded: a value longer than
 * {@value #MAX_RAW_LENGTH} characters (or one that looks hashed) is replaced by its SHA-256, in a
 * namespace of its own ({@value #HASHED}), so a client cannot make the store hold large keys, nor reach
 * another value's hashed form. Pure functions.
 */
final class KeyValues {

	static final int MAX_RAW_LENGTH = 64;

	/** The namespace of hashed values. */
	static final String HASHED = "sha256:";

	/** {@code sha256:} and a digest as {@link #bounded} writes it: Base64url without padding of 32 bytes. */
	private static final Pattern HASHED_FORM = Pattern.compile(Pattern.quote(HASHED) + "[A-Za-z0-9_-]{43}");

	private KeyValues() {
	}

	/**
	 * Returns the part of a parameter (or a header) that every way of reading it agrees on: the first
	 * value up to its first comma ({@code getParameter} reads the first value, Spring MVC's binding the
	 * values joined by commas), as an {@link #identity}.
	 */
	static String firstValueIdentity(String first) {
		int comma = first.indexOf(',');
		return identity((comma >= 0) ? first.substring(0, comma) : first);
	}

	/**
	 * Returns the account a name stands for however an application compares names: without the
	 * characters that do not show (Unicode's default ignorables: the soft hyphen, zero-width spaces and
	 * joiners, variation selectors; an LDAP directory maps them to nothing, RFC 4518), without surrounding
	 * whitespace (Spring Security's form login trims), in Unicode's compatibility form (NFKC: full-width
	 * {@code ａｌｉｃｅ} is {@code alice}) and with case folded as {@link String#equalsIgnoreCase} folds it
	 * (a case-insensitive user store, an LDAP directory; so the dotless {@code ı} and the dotted {@code İ}
	 * are {@code i}, and {@code ς} is {@code σ}), so no variant of one name is a budget of its own.
	 */
	static String identity(String name) {
		String visible = withoutIgnorables(name);
		int start = 0;
		int end = visible.length();
		while (start < end && isSpace(visible.charAt(start))) {
			start++;
		}
		while (end > start && isSpace(visible.charAt(end - 1))) {
			end--;
		}
		String stripped = visible.substring(start, end);
		String compatible = Normalizer.isNormalized(stripped, Normalizer.Form.NFKC) ? stripped
				: Normalizer.normalize(stripped, Normalizer.Form.NFKC).strip();
		return foldCase(compatible);
	}

	/** The name without default ignorable code points (the usual name has none: then the name itself). */
	private static String withoutIgnorables(String name) {
		StringBuilder visible = null;
		for (int i = 0; i < name.length();) {
			int cp = name.codePointAt(i);
			if (isIgnorable(cp)) {
				if (visible == null) {
					visible = new StringBuilder(name.length()).append(name, 0, i);
				}
			}
			else if (visible != null) {
				visible.appendCodePoint(cp);
			}
			i += Character.charCount(cp);
		}
		return (visible != null) ? visible.toString() : name;
	}

	/**
	 * Unicode's default ignorables, near enough: the format characters (the soft hyphen, zero-width space,
	 * joiners, word joiner, byte order mark, bidi controls, tags), the combining grapheme joiner, the
	 * Mongolian free variation selectors, the Hangul fillers and the variation selectors.
	 */
	private static boolean isIgnorable(int cp) {
		return Character.getType(cp) == Character.FORMAT || cp == 0x034F || (cp >= 0x115F && cp <= 0x1160)
				|| (cp >= 0x17B4 && cp <= 0x17B5) || (cp >= 0x180B && cp <= 0x180F) || cp == 0x3164
				|| (cp >= 0xFE00 && cp <= 0xFE0F) || cp == 0xFFA0 || (cp >= 0xE0100 && cp <= 0xE01EF);
	}

	/** Each code point as {@link String#equalsIgnoreCase} compares it: upper-cased, then lower-cased. */
	private static String foldCase(String name) {
		StringBuilder folded = null;
		for (int i = 0; i < name.length();) {
			int cp = name.codePointAt(i);
			int fold = Character.toLowerCase(Character.toUpperCase(cp));
			if (folded == null && fold != cp) {
				folded = new StringBuilder(name.length()).append(name, 0, i);
			}
			if (folded != null) {
				folded.appendCodePoint(fold);
			}
			i += Character.charCount(cp);
		}
		return (folded != null) ? folded.toString() : name;
	}

	/** {@link String#trim}'s and {@link String#strip}'s spaces and controls, and no-break spaces. */
	private static boolean isSpace(char c) {
		return c <= ' ' || Character.isWhitespace(c) || Character.isSpaceChar(c);
	}

	/** Whether a value is {@code sha256:} and a digest as {@link #bounded} writes it. */
	static boolean isHashedForm(String value) {
		return HASHED_FORM.matcher(value).matches();
	}

	static String bounded(String value) {
		if (value.length() <= MAX_RAW_LENGTH && !value.startsWith(HASHED)) {
			return value;
		}
		try {
			byte[] digest = MessageDigest.getInstance("SHA-256").digest(value.getBytes(StandardCharsets.UTF_8));
			return HASHED + Base64.getUrlEncoder().withoutPadding().encodeToString(digest);
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-256 is missing from this JVM", ex);
		}
	}
}
