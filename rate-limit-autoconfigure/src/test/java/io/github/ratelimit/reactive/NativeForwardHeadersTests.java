package io.github.ratelimit.reactive;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;

/** {@link ForwardedHeadersContract} with Reactor Netty believing any client's forwarding headers. */
@SpringBootTest(classes = ReactiveApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = "server.forward-headers-strategy=native")
class NativeForwardHeadersTests extends ForwardedHeadersContract {

}
