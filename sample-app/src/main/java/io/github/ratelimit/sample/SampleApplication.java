package io.github.ratelimit.sample;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A runnable application that shows the rate limit starter at work: a path rule from
 * {@code application.yml}, a named policy keyed by a form parameter, an inline annotation with a cost
 * above one, and an endpoint that is never limited.
 */
@SpringBootApplication
public class SampleApplication {

	public static void main(String[] args) {
		SpringApplication.run(SampleApplication.class, args);
	}

}
