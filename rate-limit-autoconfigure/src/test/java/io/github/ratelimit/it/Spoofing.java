package io.github.ratelimit.it;

import java.util.ArrayList;
import java.util.List;
import java.util.function.IntFunction;

import io.github.ratelimit.testsupport.Http;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Sends requests whose forwarding headers change every time and checks that they share one budget.
 */
final class Spoofing {

	/** What a budget of 3 gives 10 requests of one client. */
	static final List<Integer> ONE_BUDGET = List.of(200, 200, 200, 429, 429, 429, 429, 429, 429, 429);

	private Spoofing() {
	}

	/**
	 * Sends ten requests to {@code path}, the i-th with {@code header: value(i)}.
	 * @return the statuses
	 */
	static List<Integer> tenTimes(Http http, String path, String header, IntFunction<String> value) {
		List<Integer> statuses = new ArrayList<>();
		for (int i = 0; i < 10; i++) {
			statuses.add(http.get(path, header, value.apply(i)).statusCode());
		}
		return statuses;
	}

	static void assertOneBudget(Http http, String path, String header, IntFunction<String> value) {
		assertThat(tenTimes(http, path, header, value)).as(header + " values against a limit of 3")
			.isEqualTo(ONE_BUDGET);
	}

}
