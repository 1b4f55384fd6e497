package io.github.ratelimit.it;

import jakarta.servlet.http.HttpServletRequest;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

import io.github.ratelimit.web.RateLimited;

/**
 * Endpoints keyed by client IP, three requests a minute each, and one that shows the remote address
 * the application sees (after Spring or the container applied forwarding headers).
 */
@RestController
@RequestMapping("/ip")
class ClientIpController {

	@GetMapping("/{name}")
	@RateLimited(name = "by-ip", limit = 3, period = "1m", key = "ip")
	String limited(@PathVariable String name) {
		return name;
	}

	@GetMapping("/other/{name}")
	@RateLimited(name = "by-ip-other", limit = 3, period = "1m", key = "ip")
	String other(@PathVariable String name) {
		return name;
	}

	@GetMapping("/third/{name}")
	@RateLimited(name = "by-ip-third", limit = 3, period = "1m", key = "ip")
	String third(@PathVariable String name) {
		return name;
	}

	@GetMapping("/remote")
	String remote(HttpServletRequest request) {
		return request.getRemoteAddr();
	}

}
