package io.github.ratelimit.sample;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * The sample application on WebFlux: sample-app's endpoints written as reactive controllers, with sample-app's
 * own {@code application.yml}. The starter limits it as it limits the servlet sample.
 */
@SpringBootApplication
public class ReactiveSampleApplication {

	public static void main(String[] args) {
		SpringApplication.run(ReactiveSampleApplication.class, args);
	}

}
