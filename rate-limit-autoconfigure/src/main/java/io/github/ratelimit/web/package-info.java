/**
 * What applications use and extend on the servlet side: {@link io.github.ratelimit.web.RateLimited},
 * the {@link io.github.ratelimit.web.KeyResolver}, {@link io.github.ratelimit.web.RateLimitRejectionHandler}
 * (and its default {@link io.github.ratelimit.web.ProblemDetailRejectionHandler}),
 * {@link io.github.ratelimit.web.RequestDelay} and {@link io.github.ratelimit.web.DecisionRecorder}
 * SPIs, the read-only {@link io.github.ratelimit.web.RateLimitResult}, and the enums of the properties.
 * The pipeline itself is internal, in {@code io.github.ratelimit.web.servlet}.
 */
@NullMarked
package io.github.ratelimit.web;

import org.jspecify.annotations.NullMarked;
