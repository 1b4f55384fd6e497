package io.github.ratelimit.gateway.mvc;

import org.springframework.boot.autoconfigure.SpringBootApplication;

/** A Server MVC gateway whose routes the tests' {@code application.yml} writes. */
@SpringBootApplication
public class MvcGatewayApplication {

}
