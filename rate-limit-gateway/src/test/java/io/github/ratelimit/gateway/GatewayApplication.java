package io.github.ratelimit.gateway;

import org.springframework.boot.autoconfigure.SpringBootApplication;

/** A gateway whose routes each test class writes in its properties. */
@SpringBootApplication
public class GatewayApplication {

}
