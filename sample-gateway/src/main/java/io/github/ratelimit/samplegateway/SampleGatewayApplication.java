package io.github.ratelimit.samplegateway;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A Spring Cloud Gateway in front of the servlet sample: its routes, in {@code application.yml}, name the
 * policies that limit them ({@code RateLimited=api}).
 */
@SpringBootApplication
public class SampleGatewayApplication {

	public static void main(String[] args) {
		SpringApplication.run(SampleGatewayApplication.class, args);
	}

}
