package io.github.ratelimit.client;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.List;
import java.util.stream.Stream;

import org.springframework.http.HttpRequest;
import org.springframework.http.client.ClientHttpRequestExecution;
import org.springframework.http.client.ClientHttpResponse;

/**
 * An execution that answers with scripted responses, repeating the last one, and records the
 * bodies it was asked to send.
 */
final class ScriptedExecution implements ClientHttpRequestExecution {

	private final Deque<FakeResponse> script;

	private final List<FakeResponse> returned = new ArrayList<>();

	private final List<byte[]> bodies = new ArrayList<>();

	ScriptedExecution(FakeResponse... responses) {
		this.script = new ArrayDeque<>(Arrays.asList(responses));
	}

	@Override
	public ClientHttpResponse execute(HttpRequest request, byte[] body) {
		this.bodies.add(body.clone());
		FakeResponse response = (this.script.size() > 1) ? this.script.poll() : again(this.script.peek());
		this.returned.add(response);
		return response;
	}

	private static FakeResponse again(FakeResponse last) {
		// a fresh copy, so that each response can be checked for being closed on its own
		String[] headers = last.getHeaders()
			.headerSet()
			.stream()
			.flatMap((entry) -> entry.getValue().stream().flatMap((value) -> Stream.of(entry.getKey(), value)))
			.toArray(String[]::new);
		return FakeResponse.of(last.getStatusCode().value(), headers);
	}

	int count() {
		return this.returned.size();
	}

	List<FakeResponse> returned() {
		return this.returned;
	}

	List<byte[]> bodies() {
		return this.bodies;
	}

}
