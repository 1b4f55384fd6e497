package io.github.ratelimit.reactive;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;

/** {@link ForwardedHeadersContract} with Spring's {@code ForwardedHeaderTransformer} rewriting the request. */
@SpringBootTest(classes = ReactiveApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = "server.forward-headers-strategy=framework")
class FrameworkForwardHeadersTests extends ForwardedHeadersContract {

}
