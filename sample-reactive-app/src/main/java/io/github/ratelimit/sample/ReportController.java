package io.github.ratelimit.sample;

import reactor.core.publisher.Mono;

import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

import io.github.ratelimit.web.RateLimited;

/**
 * An expensive endpoint with an inline limit: 10 tokens a minute per client IP, and each report costs 5 of them.
 */
@RestController
class ReportController {

	@RateLimited(name = "reports", limit = 10, period = "1m", cost = 5)
	@GetMapping(path = "/api/reports/{id}", produces = MediaType.APPLICATION_JSON_VALUE)
	Mono<Report> report(@PathVariable String id) {
		return Mono.just(new Report(id, "Report " + id));
	}

	/**
	 * A report.
	 * @param id the report's id
	 * @param title its title
	 */
	record Report(String id, String title) {
	}

}
