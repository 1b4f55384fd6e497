package io.github.ratelimit.client;

import java.math.BigDecimal;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoField;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;

/**
 * Reads the {@code Retry-After} header of a response (RFC 9110 §10.2.3) as a delay: either
 * delay-seconds or an HTTP-date, which is taken relative to the response's {@code Date} header when
 * it has a valid one, else to the clock. A value that is neither is treated as absent. Stateless and
 * thread-safe.
 */
final class RetryAfter {

	/**
	 * The delay given for delay-seconds too large to be meant; it exceeds any wait budget, so the
	 * caller gives up instead of waiting.
	 */
	static final Duration TOO_LONG = Duration.ofSeconds(Long.MAX_VALUE);

	// The grammar is 1*DIGIT; a fraction is accepted too, as some servers send one.
	private static final Pattern DELAY_SECONDS = Pattern.compile("\\d+(\\.\\d+)?");

	// More than 14 digits (about 3 million years) cannot be a delay anyone means.
	private static final BigDecimal TOO_MANY_SECONDS = BigDecimal.TEN.pow(14);

	// RFC 9110 §5.6.7: recipients accept IMF-fixdate and the obsolete RFC 850 and asctime formats.
	// Not HttpHeaders#getFirstZonedDateTime: Spring 7.0 reads RFC 850's two-digit year as 20xx (so "Sunday, 06-Nov-94"
	// fails its day-of-week check), asctime's space-padded day ("Nov  6") not at all, and no value with spaces around it.
	private static final List<DateTimeFormatter> HTTP_DATE_FORMATS = List.of(DateTimeFormatter.RFC_1123_DATE_TIME,
			new DateTimeFormatterBuilder().appendPattern("EEEE, dd-MMM-")
				.appendValueReduced(ChronoField.YEAR, 2, 2, 1970)
				.appendPattern(" HH:mm:ss zzz")
				.toFormatter(Locale.US),
			DateTimeFormatter.ofPattern("EEE MMM ppd HH:mm:ss yyyy", Locale.US).withZone(ZoneOffset.UTC));

	private RetryAfter() {
	}

	/**
	 * Returns how long the response asks the client to wait.
	 * @param headers the response headers
	 * @param clock the clock an HTTP-date is taken relative to when the response has no valid
	 * {@code Date}
	 * @return the delay, zero for a date in the past, {@link #TOO_LONG} for absurdly large
	 * delay-seconds, or {@code null} when the header is missing or invalid
	 */
	static @Nullable Duration delay(HttpHeaders headers, Clock clock) {
		String value = headers.getFirst(HttpHeaders.RETRY_AFTER);
		if (value == null) {
			return null;
		}
		value = value.trim();
		if (DELAY_SECONDS.matcher(value).matches()) {
			// A fraction's digits beyond nanoseconds are cut off.
			BigDecimal seconds = new BigDecimal(value);
			return (seconds.compareTo(TOO_MANY_SECONDS) >= 0) ? TOO_LONG
					: Duration.ofSeconds(seconds.longValue(), seconds.remainder(BigDecimal.ONE).movePointRight(9).longValue());
		}
		Instant retryAt = httpDate(value);
		if (retryAt == null) {
			return null;
		}
		Instant now = httpDate(headers.getFirst(HttpHeaders.DATE));
		Duration delay = Duration.between((now != null) ? now : clock.instant(), retryAt);
		return delay.isNegative() ? Duration.ZERO : delay;
	}

	/**
	 * Parses an HTTP-date in any of the three formats of RFC 9110.
	 * @param value the header value, may be {@code null}
	 * @return the instant, or {@code null} when the value is missing or not an HTTP-date
	 */
	static @Nullable Instant httpDate(@Nullable String value) {
		if (value == null || value.isBlank()) {
			return null;
		}
		String trimmed = value.trim();
		for (DateTimeFormatter format : HTTP_DATE_FORMATS) {
			try {
				return format.parse(trimmed, Instant::from);
			}
			catch (DateTimeParseException ex) {
				// try the next format
			}
		}
		return null;
	}

}
