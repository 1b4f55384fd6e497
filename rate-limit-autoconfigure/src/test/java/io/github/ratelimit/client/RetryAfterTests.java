package io.github.ratelimit.client;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.http.HttpHeaders;

import static org.assertj.core.api.Assertions.assertThat;

class RetryAfterTests {

	private static final Clock CLOCK = Clock.fixed(Instant.parse("1994-11-06T08:49:00Z"), ZoneOffset.UTC);

	@ParameterizedTest
	@CsvSource(delimiter = '|', value = { "0|PT0S", "1|PT1S", "120|PT2M", "007|PT7S", "  3  |PT3S", "0.25|PT0.25S",
			"2.0000000019|PT2.000000001S", "00000000000000000000000000000042|PT42S",
			"99999999999999.5|PT27777777777H46M39.5S" })
	void readsDelaySeconds(String value, Duration expected) {
		assertThat(RetryAfter.delay(headers(HttpHeaders.RETRY_AFTER, value), CLOCK)).isEqualTo(expected);
	}

	@ParameterizedTest
	@ValueSource(strings = { "Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT",
			"Sun Nov  6 08:49:37 1994" })
	void readsTheThreeHttpDateFormats(String value) {
		assertThat(RetryAfter.httpDate(value)).isEqualTo(Instant.parse("1994-11-06T08:49:37Z"));
		assertThat(RetryAfter.delay(headers(HttpHeaders.RETRY_AFTER, value), CLOCK)).isEqualTo(Duration.ofSeconds(37));
	}

	@Test
	void takesADateRelativeToTheDateHeader() {
		HttpHeaders headers = headers(HttpHeaders.RETRY_AFTER, "Sun, 06 Nov 1994 08:49:37 GMT");
		headers.set(HttpHeaders.DATE, "Sun, 06 Nov 1994 08:49:30 GMT");
		assertThat(RetryAfter.delay(headers, CLOCK)).isEqualTo(Duration.ofSeconds(7));
	}

	@Test
	void aDateInThePastIsNoDelay() {
		HttpHeaders headers = headers(HttpHeaders.RETRY_AFTER, "Sun, 06 Nov 1994 08:49:37 GMT");
		headers.set(HttpHeaders.DATE, "Sun, 06 Nov 1994 09:00:00 GMT");
		assertThat(RetryAfter.delay(headers, CLOCK)).isZero();
	}

	@Test
	void readsTheFirstOfSeveralHeaders() {
		HttpHeaders headers = headers(HttpHeaders.RETRY_AFTER, "4");
		headers.add(HttpHeaders.RETRY_AFTER, "9");
		assertThat(RetryAfter.delay(headers, CLOCK)).isEqualTo(Duration.ofSeconds(4));
	}

	@Test
	void absentIsNull() {
		assertThat(RetryAfter.delay(new HttpHeaders(), CLOCK)).isNull();
		assertThat(RetryAfter.httpDate(null)).isNull();
	}

	@ParameterizedTest
	@ValueSource(strings = { "", "soon", "-1", "1.", ".5", "1.5.2", "١٢", "Sun, 06 Nov 1994", "06 Nov 1994 08:49:37",
			"Sun, 06 Nov 1994 08:49:37 XYZ" })
	void invalidIsNull(String value) {
		assertThat(RetryAfter.delay(headers(HttpHeaders.RETRY_AFTER, value), CLOCK)).isNull();
	}

	@ParameterizedTest
	@ValueSource(strings = { "123456789012345", "99999999999999999999999999" })
	void absurdlyLargeDelaySecondsAreTooLong(String value) {
		assertThat(RetryAfter.delay(headers(HttpHeaders.RETRY_AFTER, value), CLOCK)).isEqualTo(RetryAfter.TOO_LONG);
	}

	private static HttpHeaders headers(String name, String value) {
		HttpHeaders headers = new HttpHeaders();
		headers.add(name, value);
		return headers;
	}

}
