package io.github.ratelimit.sample;

import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

import io.github.ratelimit.web.RateLimited;

/**
 * An expensive endpoint with an inline limit: 10 tokens a minute per client IP, and each report costs
 * 5 of them, so a client gets two reports a minute. The budget belongs to this endpoint alone.
 */
@RestController
class ReportController {

	@RateLimited(name = "reports", limit = 10, period = "1m", cost = 5)
	@GetMapping(path = "/api/reports/{id}", produces = MediaType.APPLICATION_JSON_VALUE)
	Report report(@PathVariable String id) {
		return new Report(id, "Report " + id);
	}

	/**
	 * A report.
	 * @param id the report's id
	 * @param title its title
	 */
	record Report(String id, String title) {
	}

}
