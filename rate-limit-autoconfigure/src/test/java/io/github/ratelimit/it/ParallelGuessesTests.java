package io.github.ratelimit.it;

import java.net.http.HttpResponse;
import java.util.Map;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import io.github.ratelimit.testsupport.AtOnce;
import io.github.ratelimit.testsupport.Http;

import static io.github.ratelimit.it.RateLimitEndToEndTests.header;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A lockout ({@code count: failures}, 4 failed attempts per user) against guesses sent in parallel,
 * through a running server: attempts in flight hold their part of the budget, so however many arrive at
 * once, exactly the budget is answered and the rest get 429.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = "server.tomcat.threads.max=64")
class ParallelGuessesTests {

	private static final int PARALLEL = 48;

	@LocalServerPort
	int port;

	Http http;

	@BeforeEach
	void client() {
		this.http = new Http(this.port);
	}

	@ParameterizedTest
	@ValueSource(strings = { "token-bucket", "leaky-bucket", "fixed-window", "sliding-window-log",
			"sliding-window-counter" })
	void parallelWrongGuessesGetExactlyTheBudget(String algorithm) throws Exception {
		Map<Integer, Integer> statuses = parallel("/guess/" + algorithm, "user=mallory&password=guess&slowMillis=300");
		assertThat(statuses).containsExactlyInAnyOrderEntriesOf(Map.of(401, 4, 429, PARALLEL - 4));
		assertThat(login(algorithm, "mallory", "right").statusCode()).as("locked out").isEqualTo(429);
	}

	@Test
	void parallelSuccessesUnderCountSuccessesGetExactlyTheBudget() throws Exception {
		Map<Integer, Integer> statuses = parallel("/guess/successes", "user=trent&password=right&slowMillis=300");
		assertThat(statuses).containsExactlyInAnyOrderEntriesOf(Map.of(200, 4, 429, PARALLEL - 4));
	}

	@Test
	void parallelFailuresUnderCountSuccessesSpendNothing() throws Exception {
		Map<Integer, Integer> statuses = parallel("/guess/successes", "user=victor&password=guess&slowMillis=300");
		// Each in flight holds a unit until its 401 gives it back: at most 4 at once are answered.
		assertThat(statuses.getOrDefault(401, 0)).isBetween(4, PARALLEL);
		HttpResponse<String> after = login("successes", "victor", "right");
		assertThat(after.statusCode()).as("failures were all given back").isEqualTo(200);
		assertThat(header(after, "X-RateLimit-Remaining")).isEqualTo("3");
	}

	@Test
	void aRightPasswordBetweenWrongOnesLogsInWhileBudgetIsLeft() {
		assertThat(login("token-bucket", "peggy", "wrong").statusCode()).isEqualTo(401);
		assertThat(login("token-bucket", "peggy", "wrong").statusCode()).isEqualTo(401);
		HttpResponse<String> right = login("token-bucket", "peggy", "right");
		assertThat(right.statusCode()).isEqualTo(200);
		assertThat(header(right, "X-RateLimit-Remaining")).as("the success was given back").isEqualTo("2");
		assertThat(login("token-bucket", "peggy", "wrong").statusCode()).isEqualTo(401);
		assertThat(login("token-bucket", "peggy", "wrong").statusCode()).isEqualTo(401);
		assertThat(login("token-bucket", "peggy", "right").statusCode()).as("budget spent").isEqualTo(429);
	}

	@ParameterizedTest
	@ValueSource(strings = { "token-bucket", "leaky-bucket", "fixed-window", "sliding-window-log",
			"sliding-window-counter" })
	void aHundredSuccessesInARowSpendNothing(String algorithm) {
		for (int i = 0; i < 100; i++) {
			HttpResponse<String> right = login(algorithm, "walter", "right");
			assertThat(right.statusCode()).isEqualTo(200);
			assertThat(header(right, "X-RateLimit-Remaining")).as("attempt %d", i).isEqualTo("4");
		}
		for (int i = 0; i < 4; i++) {
			assertThat(login(algorithm, "walter", "wrong").statusCode()).isEqualTo(401);
		}
		assertThat(login(algorithm, "walter", "wrong").statusCode()).isEqualTo(429);
	}

	private HttpResponse<String> login(String algorithm, String user, String password) {
		return this.http.post("/guess/" + algorithm, "user=" + user + "&password=" + password);
	}

	/** Sends the same request {@value #PARALLEL} times at once; counts the answers by status. */
	private Map<Integer, Integer> parallel(String path, String form) throws Exception {
		return AtOnce.statuses(PARALLEL, (i) -> () -> this.http.post(path, form).statusCode());
	}

}
